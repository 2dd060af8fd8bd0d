"""Trees from distances: neighbour joining, UPGMA, Newick in and out.

- ``_tree``: :class:`Tree`, :func:`nj` (the registry's ``neighbor_joining`` operation: the C++
  core, or :mod:`bioaccel.backends.nj_array` on NumPy or CuPy; the tie rule) and :func:`upgma`;
- ``_newick``: the Newick reader;
- ``_pipeline``: :func:`low_memory_tree`, the low-memory tree of sequences or a matrix file
  (distances streamed to a ``.cdist``, the join in-process or by the program);
- ``_program``: the low-memory joining handed to the ``bioaccel-nj`` program.
"""

from .._core import lazy_getattr
from ._newick import NewickError, parse_newick, read_newick
from ._tree import Tree, nj, quote_label, upgma

__all__ = [
    "NewickError",
    "Tree",
    "joiner_program",
    "low_memory_tree",
    "nj",
    "parse_newick",
    "prepare_input",
    "quote_label",
    "read_newick",
    "run_joiner",
    "upgma",
]

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "joiner_program": ("._program", "joiner_program"),
    "low_memory_tree": ("._pipeline", "low_memory_tree"),
    "prepare_input": ("._program", "prepare_input"),
    "run_joiner": ("._program", "run_joiner"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)
