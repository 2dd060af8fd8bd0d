"""``show_config()`` and ``bioaccel doctor``: what this installation can use, and what is broken."""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str, fix: str = "") -> None:
        self.checks.append(Check(name, ok, detail, fix))

    def get(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def as_dict(self) -> dict[str, dict[str, object]]:
        return {c.name: {"ok": c.ok, "detail": c.detail, "fix": c.fix} for c in self.checks}


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _run(cmd: list[str], timeout: float = 20) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (res.stdout + res.stderr).strip()


def _cuda_version_text(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def cupy_fix_for_driver(driver_major: int) -> str:
    """The pip command that installs a CuPy wheel this driver can run."""
    if driver_major >= 13:
        return "pip install 'bioaccel[cuda13]'   # cupy-cuda13x"
    if driver_major == 12:
        return "pip install 'bioaccel[cuda12]'   # cupy-cuda12x"
    return (
        f"the driver supports only CUDA {driver_major}.x: upgrade the NVIDIA driver "
        "(CuPy 13 needs CUDA 11.2+, bioaccel's extras cover 12 and 13)"
    )


def _driver_cuda_version() -> int | None:
    """Highest CUDA version the installed driver supports (e.g. 12040), via libcuda or nvidia-smi."""
    try:
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            return v.value
    except OSError:
        pass
    text = _run(["nvidia-smi"])
    if text:
        m = re.search(r"CUDA Version:\s*(\d+)\.(\d+)", text)
        if m:
            return int(m.group(1)) * 1000 + int(m.group(2)) * 10
    return None


def _simd_detail(f: dict) -> str:
    """One line from ``_native.cpu_features()``: the kernels in use, built, and the CPU's."""

    def names(d: dict) -> str:
        return ", ".join(k for k, v in d.items() if v) or "none"

    forced = [k + "=1" for k, v in f["forced"].items() if v]
    return (
        f"SIMD kernels in use: {f['isa']}{' (' + ', '.join(forced) + ')' if forced else ''}; "
        f"built: {names(f['built'])}; CPU: {names(f['cpu'])}"
    )


def _numba_probe_kernel(a):
    """The kernel doctor compiles to see that numba-cuda can compile at all."""
    a[0] = a[0] + 1.0


def collect(check_r: bool = True) -> Report:
    """Probe the installation. Nothing here raises; every failure becomes a Check."""
    rep = Report()
    # native core
    try:
        from ._core import load_native

        _native = load_native()
        omp = _native.openmp_enabled()
        rep.add(
            "native",
            True,
            f"bioaccel._native loaded; OpenMP {'on' if omp else 'off'}, "
            f"{_native.max_threads()} thread(s) by default",
        )
        rep.add(
            "openmp",
            omp,
            "built with OpenMP" if omp else "built without OpenMP (one thread)",
            ""
            if omp
            else "rebuild without BIOACCEL_NO_OPENMP=1, with a compiler that has -fopenmp",
        )
        rep.add("simd", True, _simd_detail(_native.cpu_features()))
        program = Path(__file__).resolve().parent / "bioaccel-nj"  # bioaccel.trees._program
        built = program.is_file() and os.access(program, os.X_OK)
        rep.add(
            "nj-program",
            built,
            f"{program} (tree --low-memory joins there)"
            if built
            else "bioaccel-nj not built: tree --low-memory joins in-process (+40 MiB)",
            "" if built else "pip install --force-reinstall . (the build links it)",
        )
    except ImportError as exc:
        rep.add(
            "native",
            False,
            f"bioaccel._native failed to load: {exc}",
            "pip install --force-reinstall .",
        )
    # CUDA driver
    driver = _driver_cuda_version()
    if driver is None:
        rep.add(
            "cuda-driver",
            False,
            "no NVIDIA driver found (libcuda / nvidia-smi)",
            "GPU backends need an NVIDIA GPU and driver; the cpu backend works without",
        )
    else:
        rep.add("cuda-driver", True, f"driver supports CUDA up to {_cuda_version_text(driver)}")
    # CuPy
    cupy_dists = [
        d for d in ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy") if _version(d)
    ]
    if not cupy_dists:
        rep.add(
            "cupy",
            False,
            "CuPy not installed",
            cupy_fix_for_driver(driver // 1000)
            if driver
            else "pip install 'bioaccel[cuda12]' on a GPU machine",
        )
    else:
        dist = cupy_dists[0]
        m = re.search(r"cuda(\d+)x", dist)
        wheel_major = int(m.group(1)) if m else None
        detail = f"{dist} {_version(dist)}"
        if driver is not None and wheel_major is not None and wheel_major > driver // 1000:
            rep.add(
                "cupy",
                False,
                f"{detail} is built for CUDA {wheel_major}, but the driver supports "
                f"only CUDA {_cuda_version_text(driver)}",
                f"pip uninstall -y {dist} && {cupy_fix_for_driver(driver // 1000)}",
            )
        else:
            try:
                import cupy

                runtime = cupy.cuda.runtime.runtimeGetVersion()
                count = cupy.cuda.runtime.getDeviceCount()
                rep.add(
                    "cupy",
                    count > 0,
                    f"{detail}, CUDA runtime {_cuda_version_text(runtime)}, {count} device(s)",
                    "" if count else "no GPU visible (CUDA_VISIBLE_DEVICES?)",
                )
            except Exception as exc:
                rep.add(
                    "cupy",
                    False,
                    f"{detail} does not work: {exc}",
                    cupy_fix_for_driver(driver // 1000) if driver else "install an NVIDIA driver",
                )
    # numba-cuda
    nc = _version("numba-cuda")
    if nc is None:
        rep.add("numba-cuda", False, "numba-cuda not installed", "pip install numba-cuda")
    elif os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        rep.add(
            "numba-cuda", True, f"numba-cuda {nc} on the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
        )
    else:
        try:
            from numba import cuda

            if cuda.is_available():
                names = [
                    d.name.decode() if isinstance(d.name, bytes) else str(d.name) for d in cuda.gpus
                ]
                # a device is not enough: on one GPU image numba-cuda saw the H200 but could
                # compile nothing (it wants np.row_stack, which NumPy 2.5 removed)
                from numba import types

                cuda.compile_ptx(_numba_probe_kernel, (types.float32[:],), cc=(7, 5))
                rep.add(
                    "numba-cuda", True, f"numba-cuda {nc}, compiles; devices: {', '.join(names)}"
                )
            else:
                rep.add(
                    "numba-cuda",
                    False,
                    f"numba-cuda {nc}, no CUDA device visible",
                    "GPU needed for the numba-cuda backend",
                )
        except Exception as exc:
            rep.add(
                "numba-cuda",
                False,
                f"numba-cuda {nc} failed: {exc}",
                "pip install -U numba numba-cuda",
            )
    # nvcc
    text = _run(["nvcc", "--version"])
    if text is None:
        rep.add("nvcc", False, "nvcc not on PATH (only needed to compile-check CUDA sources)")
    else:
        m = re.search(r"release ([\d.]+)", text)
        rep.add("nvcc", True, f"nvcc {m.group(1) if m else text.splitlines()[-1]}")
    # R and rpy2
    if check_r:
        r_text = _run(["R", "--version"])
        rep.add(
            "R",
            r_text is not None,
            r_text.splitlines()[0] if r_text else "R not found on PATH",
            "" if r_text else "apt-get install r-base-core r-cran-ape r-cran-phangorn",
        )
        rv = _version("rpy2")
        if rv is None:
            rep.add("rpy2", False, "rpy2 not installed", "pip install 'bioaccel[r]'")
        elif r_text is None:  # rpy2 is there; what is missing is R (the fix is above)
            rep.add(
                "rpy2",
                False,
                f"rpy2 {rv} installed, but it needs R, which is missing",
                "install R (see R above); rpy2 itself is fine",
            )
        else:
            try:
                from .rinterop import _ro  # starts R, leaves LD_LIBRARY_PATH as it was

                ro = _ro()
                ape = bool(ro.r('c(requireNamespace("ape", quietly=TRUE))')[0])
                rep.add(
                    "rpy2",
                    ape,
                    f"rpy2 {rv} loads R {ro.r('R.version.string')[0]}; "
                    f"ape {'present' if ape else 'missing'}",
                    "" if ape else "apt-get install r-cran-ape",
                )
            except Exception as exc:
                rep.add(
                    "rpy2",
                    False,
                    f"rpy2 {rv} failed to load R: {exc}",
                    "use rpy2>=3.5,<3.6 with Debian 12's R 4.2",
                )
    from .backends import available_backends

    for name, reason in available_backends().items():
        rep.add(f"backend:{name}", reason is None, "available" if reason is None else reason)
    return rep


def show_config(check_r: bool = True) -> dict[str, dict[str, object]]:
    """Print and return what this installation can use (backends, OpenMP, CUDA, R)."""
    rep = collect(check_r=check_r)
    for c in rep.checks:
        mark = "ok " if c.ok else "-- "
        print(f"{mark}{c.name:18s} {c.detail}")
        if c.fix and not c.ok:
            print(f"   {'':18s} fix: {c.fix}")
    return rep.as_dict()


#: what `bioaccel doctor --require X` checks
REQUIREMENTS = {
    "cpu": ["native"],
    "openmp": ["native", "openmp"],
    "cupy": ["cuda-driver", "cupy"],
    "numba-cuda": ["numba-cuda"],
    "gpu": ["cuda-driver", "cupy", "numba-cuda"],
    "r": ["R", "rpy2"],
    "nvcc": ["nvcc"],
}
