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

from ._main import main, run

__all__ = ["main", "run"]
