"""Trees from distances: neighbour joining, UPGMA, Newick in and out.

- ``_tree``: :class:`Tree`, :func:`nj` and :func:`upgma` (backends and the tie rule);
- ``_nj``: the NumPy neighbour-joining reference (``ape::nj``'s formulas);
- ``_newick``: the Newick reader.
"""

from ._newick import NewickError, parse_newick, read_newick
from ._tree import Tree, nj, upgma

__all__ = ["NewickError", "Tree", "nj", "parse_newick", "read_newick", "upgma"]
