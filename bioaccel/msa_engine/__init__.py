"""Multiple sequence alignment: a progressive engine with FAMSA-style scoring.

Stages, each in its own module (the C++ core is csrc/msa/):

- :mod:`.scoring`: substitution matrix and gap penalties (PFASUM43, FAMSA's gaps);
- :mod:`.guide`: guide-tree distances (bit-parallel LCS) and trees as a flat list of merges
  (single linkage, UPGMA, NJ, medoid tree, or a given tree);
- :mod:`.engine`: :func:`msa`, which runs the progressive stage (profile-profile DP with
  sum-of-pairs columns and gap costs by gap kind, merges on a queue of ready merges across
  threads) and refinement (gap-pattern splits);
- :mod:`.alignment`: :class:`MultipleAlignment`, writers and distances;
- :mod:`.read`: :func:`read_alignment`, an alignment file back into a ``MultipleAlignment``.
"""

from .alignment import MultipleAlignment
from .engine import msa
from .read import read_alignment

__all__ = ["MultipleAlignment", "msa", "read_alignment"]
