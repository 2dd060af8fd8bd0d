"""The R package in R/: installed with R CMD INSTALL, its testthat suite run; its help pages
up to date with the roxygen comments and ``R CMD check`` clean."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.datasets import child_env, unavailable

pytestmark = pytest.mark.r

REPO = Path(__file__).resolve().parents[2]


def _r_with(packages: str) -> dict[str, str]:
    """The environment for R children, once R and these R packages are known to be there."""
    if shutil.which("Rscript") is None:
        unavailable(
            "R is not installed (apt-get install r-base-core r-cran-ape r-cran-testthat "
            "r-cran-roxygen2)"
        )
    env = child_env()
    check = subprocess.run(
        ["Rscript", "-e", "; ".join(f"library({p})" for p in packages.split())],
        capture_output=True,
        text=True,
        env=env,
    )
    if check.returncode != 0:
        unavailable(f"R packages {packages} missing: {check.stderr.strip()[-300:]}")
    return env


def test_r_package_testthat_suite(tmp_path):
    env = _r_with("testthat ape")
    lib = tmp_path / "lib"
    lib.mkdir()
    inst = subprocess.run(
        ["R", "CMD", "INSTALL", f"--library={lib}", str(REPO / "R")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert inst.returncode == 0, inst.stderr[-3000:]
    script = (
        f".libPaths(c({str(lib)!r}, .libPaths())); library(testthat); library(bioaccel); "
        f"res <- as.data.frame(test_dir({str(REPO / 'R/tests/testthat')!r}, "
        "reporter = 'summary', stop_on_failure = TRUE)); "
        "cat('\\nTESTS', nrow(res), 'FAILED', sum(res$failed), 'SKIPPED', sum(res$skipped), '\\n')"
    )
    run = subprocess.run(
        ["Rscript", "-e", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "FAILED 0" in out, out[-4000:]
    # the CLI-backed tests ran too (the bioaccel command is installed with this package)
    assert "SKIPPED 0" in out, out[-4000:]


def test_r_help_pages_are_generated_from_the_roxygen_comments(tmp_path):
    """man/ and NAMESPACE are what roxygen2 makes of the comments in R/R/*.R."""
    env = _r_with("roxygen2 ape")
    copy = tmp_path / "bioaccel"
    shutil.copytree(REPO / "R", copy)
    shutil.rmtree(copy / "man")
    (copy / "NAMESPACE").unlink()
    run = subprocess.run(
        ["Rscript", "-e", "roxygen2::roxygenise()"],
        capture_output=True,
        text=True,
        env=env,
        cwd=copy,
        timeout=300,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    made = sorted(p.name for p in (copy / "man").iterdir())
    assert made == sorted(p.name for p in (REPO / "R/man").iterdir()), (
        "R/man is out of date: run Rscript -e 'roxygen2::roxygenise()' in R/"
    )
    for name in made + ["NAMESPACE"]:
        path = f"man/{name}" if name != "NAMESPACE" else name
        assert (copy / path).read_text() == (REPO / "R" / path).read_text(), (
            f"R/{path} differs from what roxygen2 makes: run Rscript -e 'roxygen2::roxygenise()' in R/"
        )


def test_r_cmd_check_is_clean(tmp_path):
    """R CMD build + R CMD check (documentation, code, examples; the tests run above)."""
    env = _r_with("ape")
    env["_R_CHECK_FORCE_SUGGESTS_"] = "false"
    build = subprocess.run(
        ["R", "CMD", "build", "--no-build-vignettes", str(REPO / "R")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert build.returncode == 0, (build.stdout + build.stderr)[-3000:]
    tarball = next(tmp_path.glob("bioaccel_*.tar.gz"))
    check = subprocess.run(
        ["R", "CMD", "check", "--no-manual", "--no-tests", tarball.name],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    out = check.stdout + check.stderr
    status = [line for line in out.splitlines() if line.startswith("Status:")]
    assert check.returncode == 0 and status, out[-4000:]
    assert "ERROR" not in status[-1] and "WARNING" not in status[-1], out[-6000:]
