"""The R package in R/: installed with R CMD INSTALL, its testthat suite run."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.datasets import child_env, unavailable

pytestmark = pytest.mark.r

REPO = Path(__file__).resolve().parents[1]


def test_r_package_testthat_suite(tmp_path):
    if shutil.which("Rscript") is None:
        unavailable("R is not installed (apt-get install r-base-core r-cran-ape r-cran-testthat)")
    env = child_env()
    check = subprocess.run(["Rscript", "-e", "library(testthat); library(ape)"],
                           capture_output=True, text=True, env=env)
    if check.returncode != 0:
        unavailable(f"R packages testthat/ape missing: {check.stderr.strip()[-300:]}")
    lib = tmp_path / "lib"
    lib.mkdir()
    inst = subprocess.run(["R", "CMD", "INSTALL", f"--library={lib}", str(REPO / "R")],
                          capture_output=True, text=True, env=env)
    assert inst.returncode == 0, inst.stderr[-3000:]
    script = (f".libPaths(c({str(lib)!r}, .libPaths())); library(testthat); library(bioaccel); "
              f"res <- as.data.frame(test_dir({str(REPO / 'R/tests/testthat')!r}, "
              "reporter = 'summary', stop_on_failure = TRUE)); "
              "cat('\\nTESTS', nrow(res), 'FAILED', sum(res$failed), 'SKIPPED', sum(res$skipped), '\\n')")
    run = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "FAILED 0" in out, out[-4000:]
    # the CLI-backed tests ran too (the bioaccel command is installed with this package)
    assert "SKIPPED 0" in out, out[-4000:]
