"""The CuPy backend: CUDA C kernels (``bioaccel/kernels/*.cu``) launched through CuPy, and
pair counts as one-hot matrix products; the array code also runs with NumPy.

- ``_backend``: :class:`CupyBackend`;
- ``_align``, ``_edit``, ``_msa``: the kernel launchers of alignment scores, edit and LCS
  lengths, and the MSA profile DP.
"""

from ._backend import CupyBackend

__all__ = ["CupyBackend"]
