"""Shared fixtures. The CUDA simulator is switched on here, before numba is imported,
unless BIOACCEL_GPU_TESTS=1 asks for the real GPU (scripts/gpu-check.sh)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

if os.environ.get("BIOACCEL_GPU_TESTS") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np
import pytest

from bioaccel import backends
from bioaccel.backends.cupy._backend import CupyBackend

from . import datasets
from .datasets import child_env, unavailable

GPU = os.environ.get("BIOACCEL_GPU_TESTS") == "1"


def pytest_collection_modifyitems(config, items):
    if GPU:
        return
    skip_gpu = pytest.mark.skip(reason="needs a real CUDA GPU: run scripts/gpu-check.sh there")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


# Backends under test: every backend is compared with `reference` by one test body.
# `cupy` runs its array code with NumPy here (with CuPy itself on a GPU machine), and
# `numba-cuda` runs its kernels on the CUDA simulator unless BIOACCEL_GPU_TESTS=1.
BACKEND_PARAMS = ["cpu", "numba-cuda", "cupy"]


def make_backend(name: str):
    if name == "cupy" and not GPU:
        return CupyBackend(xp=np)
    return backends.get_backend(name)


@pytest.fixture(params=BACKEND_PARAMS)
def backend_name(request, monkeypatch):
    """Name of a backend to compare against the reference, installed in the registry."""
    name = request.param
    monkeypatch.setitem(backends._instances, name, make_backend(name))
    return name


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


@pytest.fixture(scope="session")
def woodmouse(tmp_path_factory):
    return datasets.woodmouse()


@pytest.fixture(scope="session")
def laurasiatherian():
    return datasets.laurasiatherian()


@pytest.fixture(scope="session")
def flu_ha():
    return datasets.flu_ha()


@pytest.fixture(scope="session")
def snakemake_exe():
    exe = shutil.which("snakemake")
    if exe is None:
        unavailable("snakemake is not installed (pip install '.[workflows]')")
    return exe


@pytest.fixture(scope="session")
def r_library(tmp_path_factory):
    """The bioaccel R package (R/) installed once per session into a private library."""
    if shutil.which("R") is None:
        unavailable("R is not installed (apt-get install r-base-core r-cran-ape r-cran-phangorn)")
    lib = tmp_path_factory.mktemp("rlib")
    proc = subprocess.run(
        ["R", "CMD", "INSTALL", f"--library={lib}", str(Path(__file__).resolve().parents[1] / "R")],
        capture_output=True,
        text=True,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return lib


@pytest.fixture(scope="session")
def ro():
    """rpy2's robjects with R and ape loaded (tests.rhelpers.r)."""
    from .rhelpers import r

    return r()


@pytest.fixture(scope="session")
def rinterop(ro):
    from bioaccel import rinterop

    return rinterop
