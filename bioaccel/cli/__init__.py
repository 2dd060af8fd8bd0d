"""The ``bioaccel`` command (click): ``main`` the command group, ``run`` the program's entry point.

- ``_main``: the group, the distance/tree/align/edit/sketch commands, ``doctor``;
- ``_io``: argument readers and output checks shared by every command;
- ``_options``: the options every command shares (``-t``, ``-b``, ``--devices``, ...) and the
  one error style (``fail``);
- ``_msa``: ``bioaccel msa``; ``_neighbors``: ``bioaccel neighbors``; ``_cluster``:
  ``bioaccel cluster``;
- ``_sched``: ``gpu-run``, ``gpus``, ``schedule`` and the other scheduling commands;
- ``__main__``: ``python -m bioaccel.cli``.
"""

import os

# NumPy's OpenBLAS starts a thread a core when NumPy is imported, and they spin for a while:
# with `-t 1` the command used a second core (0.48 -> 0.59 s of CPU for `cluster -d 1` on
# 10^5 amplicons). The commands do no BLAS work (their kernels are C++ with their own
# threads, -t), so one BLAS thread; a value the user set is kept. Set here, before the
# command's modules import NumPy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ._main import main, run  # noqa: E402

__all__ = ["main", "run"]
