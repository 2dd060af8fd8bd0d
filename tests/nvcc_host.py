"""CUDA kernels' per-pair functions built by nvcc as CPU programs (tests/cuda_host/), so
their logic is checked on machines without a GPU."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np

from tests.datasets import unavailable

HOST_DIR = Path(__file__).parent / "cuda_host"


def build(tmp_path_factory, source: str, flags: tuple[str, ...] = ()) -> Path:
    """Compile tests/cuda_host/<source> (skip when nvcc is missing), with extra nvcc flags."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        unavailable("nvcc is not on PATH (CUDA toolkit; scripts/test.sh adds /usr/local/cuda*/bin)")
    exe = tmp_path_factory.mktemp("cuda_host") / Path(source).stem
    res = subprocess.run(
        [nvcc, "-O2", *flags, "-x", "cu", str(HOST_DIR / source), "-o", str(exe)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    return exe


def run(
    exe: Path, parts: list[np.ndarray], shape: tuple[int, int], args: tuple[str, ...] = ()
) -> np.ndarray:
    """Feed the arrays' bytes on stdin; the program prints one int32 per line."""
    res = subprocess.run(
        [str(exe), *args],
        input=b"".join(p.tobytes() for p in parts),
        capture_output=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr.decode()
    return np.array(res.stdout.split(), dtype=np.int32).reshape(shape)


def nvrtc_library():
    """libnvrtc from the nvidia-cuda-nvrtc wheel (a test dependency), or None."""
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        for lib in sorted(Path(root).glob("*/lib/libnvrtc.so*")):
            if "builtins" not in lib.name:
                return ctypes.CDLL(str(lib))
    return None
