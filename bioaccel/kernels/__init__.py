"""GPU kernels: Numba CUDA kernels (``*_numba.py``) and CUDA C sources (``*.cu``) for CuPy.

Nothing here is imported by ``import bioaccel``; backends load kernels on first use.
"""

from pathlib import Path

KERNEL_DIR = Path(__file__).parent


def cuda_source(name: str) -> str:
    """Text of the CUDA C source ``name`` (e.g. ``"onehot.cu"``) shipped in this package."""
    return (KERNEL_DIR / name).read_text()
