"""Trees from distances: neighbour joining, UPGMA, Newick in and out.

- ``_tree``: :class:`Tree`, :func:`nj` (the registry's ``neighbor_joining`` operation: the C++
  core, or :mod:`bioaccel.backends.nj_array` on NumPy or CuPy; the tie rule) and :func:`upgma`;
- ``_newick``: the Newick reader.
"""

from ._newick import NewickError, parse_newick, read_newick
from ._tree import Tree, nj, upgma

__all__ = ["NewickError", "Tree", "nj", "parse_newick", "read_newick", "upgma"]
