"""Multiple sequence alignment: a progressive engine with FAMSA-style scoring, and an
accurate mode by probabilistic consistency.

Stages, each in its own module (the C++ core is csrc/msa/):

- :mod:`.options`: what :func:`msa` is asked to do: the operation (align, add, profile), its
  options as one frozen :class:`MsaOptions`, and the one rule of which option applies to
  which operation and mode;
- :mod:`.scoring`: substitution matrix and gap penalties (PFASUM43, FAMSA's gaps);
- :mod:`.guide`: guide-tree distances (bit-parallel LCS) and trees as a flat list of merges
  (single linkage, UPGMA, NJ, medoid tree, or a given tree);
- :mod:`.engine`: :func:`msa`, which runs the progressive stage (profile-profile DP with
  sum-of-pairs columns and gap costs by gap kind, merges on a queue of ready merges across
  threads) and refinement (gap-pattern splits), or hands over to the modules below;
- :mod:`.accurate`: the accurate mode (pair-HMM posteriors, consistency, progressive
  alignment and refinement on the summed posteriors);
- :mod:`.add`: sequences added to an existing alignment, and two alignments aligned as
  profiles;
- :mod:`.alignment`: :class:`MultipleAlignment`, writers (the alignment and its side
  outputs: guide tree, dropped residues) and distances;
- :mod:`.read`: :func:`read_alignment`, an alignment file back into a ``MultipleAlignment``,
  and header lines (id and description).
"""

from .._core import lazy_getattr
from .alignment import MultipleAlignment, side_output_format
from .engine import msa, resolve_mode, run_msa
from .options import MsaOptions, MsaScoring
from .read import SequenceText, read_alignment

__all__ = [
    "ALIGNMENT_FORMATS",
    "GUIDE_TREES",
    "GuideDistances",
    "MsaOptions",
    "MultipleAlignment",
    "MsaScoring",
    "SequenceText",
    "msa",
    "msa_scoring",
    "pair_hmm",
    "posterior_set",
    "read_alignment",
    "resolve_mode",
    "run_msa",
    "side_output_format",
]

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "ALIGNMENT_FORMATS": (".alignment", "ALIGNMENT_FORMATS"),
    # the earlier name of ALIGNMENT_FORMATS, still importable (not in __all__: a second
    # public FORMATS, the sequence readers', meant input formats)
    "FORMATS": (".alignment", "ALIGNMENT_FORMATS"),
    "GUIDE_TREES": (".guide", "GUIDE_TREES"),
    "GuideDistances": (".guide", "GuideDistances"),
    "msa_scoring": (".scoring", "msa_scoring"),
    "pair_hmm": (".accurate", "pair_hmm"),
    "posterior_set": (".accurate", "posterior_set"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)
