"""GPU kernels: Numba CUDA kernels (``*_numba.py``) and CUDA C sources (``*.cu``) for CuPy.

Nothing here is imported by ``import bioaccel``; backends load kernels on first use.

- ``align_numba``: alignment scores (Gotoh, one pair per thread);
- ``edit_numba``: edit distances (Myers/Hyyrö bit-vectors);
- ``lcs_numba``: LCS lengths (the MSA guide tree's distances);
- ``dna_counts_numba``: aligned-DNA pair counts;
- ``msa_numba``: the MSA profile-profile DP;
- ``posterior_numba``: pair-HMM posteriors (the accurate MSA mode).
"""

from pathlib import Path

from .._core import lazy_getattr

KERNEL_DIR = Path(__file__).parent


def cuda_source(name: str) -> str:
    """Text of the CUDA C source ``name`` (e.g. ``"onehot.cu"``) shipped in this package."""
    return (KERNEL_DIR / name).read_text()


#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "THREADS": (".msa_numba", "THREADS"),
    "msa_profile_dp_kernel": (".msa_numba", "msa_profile_dp_kernel"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "THREADS",
    "msa_profile_dp_kernel",
]
