"""Import hygiene, the native build's configuration, and compile checks of the CUDA C
sources with nvcc and with NVRTC (the runtime compiler CuPy's RawModule uses)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bioaccel.kernels import KERNEL_DIR
from tests.datasets import child_env, unavailable
from tests.nvcc_host import nvrtc_library

CUDA_SOURCES = sorted(KERNEL_DIR.glob("*.cu"))


def test_import_needs_no_gpu_no_cupy_no_r():
    # Make cupy and rpy2 unimportable, import bioaccel, use the CPU path, and check that
    # neither they nor numba (a required dependency, but slow to import) were loaded.
    # (numba itself is not blocked: numba-cuda's import redirector looks it up on startup.)
    code = (
        "import sys, importlib.abc, importlib.machinery\n"
        "class Refuse(importlib.abc.Loader):\n"
        "    def create_module(self, spec):\n"
        "        raise ImportError('blocked ' + spec.name)\n"
        "    def exec_module(self, module):\n"
        "        pass\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('cupy', 'rpy2'):\n"
        "            return importlib.machinery.ModuleSpec(name, Refuse())\n"
        "sys.meta_path.insert(0, Block())\n"
        "import bioaccel\n"
        "d = bioaccel.distance_matrix(['ACGT', 'ACGA', 'TCGA'], 'k80')\n"
        "assert d.data.shape == (3, 3)\n"
        "assert not any(m.split('.')[0] in ('cupy', 'rpy2', 'numba') for m in sys.modules)\n"
        "print(bioaccel.get_backend('auto').name, bioaccel.available_backends()['cupy'])\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env()
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("cpu ")
    assert "CuPy is not installed" in res.stdout or "no NVIDIA driver" in res.stdout


def test_native_reports_openmp():
    from bioaccel import _native

    assert isinstance(_native.openmp_enabled(), bool)
    assert _native.max_threads() >= 1


def test_there_are_cuda_sources():
    assert CUDA_SOURCES, "the CuPy backend's CUDA C sources are missing"


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("source", CUDA_SOURCES, ids=lambda p: p.name)
def test_cuda_source_compiles(tmp_path, source: Path, arch: str):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        unavailable("nvcc is not on PATH")
    res = subprocess.run(
        [
            nvcc,
            f"-arch={arch}",
            "-Werror",
            "all-warnings",
            "-c",
            str(source),
            "-o",
            str(tmp_path / "k.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["compute_80", "compute_90"])
@pytest.mark.parametrize("source", CUDA_SOURCES, ids=lambda p: p.name)
def test_cuda_source_compiles_with_nvrtc(source: Path, arch: str):
    lib = nvrtc_library()
    if lib is None:
        unavailable("libnvrtc is not installed (pip install nvidia-cuda-nvrtc)")
    prog = ctypes.c_void_p()
    assert (
        lib.nvrtcCreateProgram(
            ctypes.byref(prog), source.read_bytes(), source.name.encode(), 0, None, None
        )
        == 0
    )
    try:
        options = (ctypes.c_char_p * 1)(f"--gpu-architecture={arch}".encode())
        status = lib.nvrtcCompileProgram(prog, 1, options)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        assert status == 0, log.value.decode()
        assert "warning" not in log.value.decode(), log.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


# -- one version -------------------------------------------------------------------------------
REPO = Path(__file__).resolve().parents[2]


def test_pyproject_takes_its_version_from_the_package():
    # the one source is bioaccel.__version__: pyproject.toml holds no copy of it
    text = (REPO / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.M), "a second version in pyproject.toml"
    assert re.search(r'^dynamic\s*=\s*\[[^]]*"version"', project, re.M)
    assert re.search(
        r'^\[tool\.setuptools\.dynamic\]\s*\nversion\s*=\s*\{\s*attr\s*=\s*"bioaccel\.__version__"',
        text,
        re.M,
    )
    import bioaccel

    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", bioaccel.__version__)


def test_the_r_package_version_is_the_python_one():
    # R cannot read Python's version: DESCRIPTION repeats it and this test pins the two
    import bioaccel

    found = re.findall(r"^Version:\s*(\S+)\s*$", (REPO / "R" / "DESCRIPTION").read_text(), re.M)
    assert found == [bioaccel.__version__], (found, bioaccel.__version__)


def test_no_other_file_spells_the_version():
    import bioaccel

    v = re.escape(bioaccel.__version__)
    holders = [
        str(p.relative_to(REPO))
        for p in [REPO / "setup.py", REPO / "pyproject.toml", *(REPO / "bioaccel").rglob("*.py")]
        if re.search(rf"['\"]{v}['\"]", p.read_text())
    ]
    assert holders == ["bioaccel/__init__.py"], holders
