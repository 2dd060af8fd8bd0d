"""The Numba CUDA backend: ``@cuda.jit`` kernels (``bioaccel/kernels/*_numba.py``), tested
under the CUDA simulator.

- ``_backend``: :class:`NumbaCudaBackend`;
- ``_msa``: the MSA profile DP launcher.
"""

from ._backend import NumbaCudaBackend

__all__ = ["NumbaCudaBackend"]
