"""Habits of the code and its tests, each held by a test that fails on the first break:

- no test module imports another test module (what tests share lives in the helper modules
  of tests/: ``datasets`` for data, skips and child environments, ``cli_runner`` for the
  command, and the topic helpers beside them), child scripts included;
- the ``bioaccel`` command is run through ``tests/cli_runner.py`` only (in process or as a
  child, both named there);
- every skip goes through ``tests.datasets.unavailable`` (a failure under
  BIOACCEL_STRICT_TESTS=1) or ``not_applicable`` (a condition no installation changes), or
  is listed below with its reason;
- comments, docstrings and test names give reasons, not tracker numbers (a number says
  nothing to a reader without the tracker; the history belongs in CHANGELOG.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import datasets

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"

#: folders that hold no source: data, caches and run outputs
SKIPPED_DIRS = {".data", "__pycache__", ".snakemake", "results", "logs", "build", ".pytest_cache"}


#: this file spells out the patterns it looks for
HERE = Path(__file__).resolve()


def python_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.py")
        if not SKIPPED_DIRS & set(p.relative_to(root).parts) and p != HERE
    )


def offending_lines(files, pattern: re.Pattern, allowed=()) -> list[str]:
    """``path:line: text`` of every match of ``pattern`` in ``files`` outside ``allowed``
    (pairs of a relative path and a text the line contains)."""
    hits = []
    for path in files:
        rel = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in pattern.finditer(text):
            line_no = text.count("\n", 0, m.start()) + 1
            line = text.splitlines()[line_no - 1]
            if any(rel == f and part in line for f, part in allowed):
                continue
            hits.append(f"{rel}:{line_no}: {line.strip()}")
    return hits


# -- no test module imports another ------------------------------------------------------------
#: an import of a ``test_*`` module, as a statement or in a child script's text
TEST_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?:[\w.]*\.)?test_\w+[ \t]+import|import[ \t]+(?:[\w.]*\.)?test_\w+"
    r"|from[ \t]+\.[\w.]*[ \t]+import[ \t]+test_\w+)",
    re.M,
)


def test_no_test_module_imports_another_test_module():
    hits = offending_lines(python_files(TESTS), TEST_IMPORT)
    assert not hits, "move what tests share into a helper module of tests/:\n" + "\n".join(hits)


def test_the_import_rule_catches_statements_and_child_scripts():
    for text in (
        "from tests.sched.test_sched_snakemake import FakeJob\n",
        'CHILD = r"""\nfrom tests.core.test_cpu_dispatch import inputs\n"""\n',
        "    import tests.pairwise.test_edit as e\n",
        "from . import test_edit\n",
    ):
        assert TEST_IMPORT.search(text), text
    assert not TEST_IMPORT.search("from tests.cpu_levels import LEVELS\nimport testing\n")


# -- one CLI runner ----------------------------------------------------------------------------
CLI_RUNNERS = re.compile(r"CliRunner\(|[\"']-m[\"'],\s*[\"']bioaccel\.cli[\"']")


def test_the_command_is_run_through_the_one_runner():
    files = [p for p in python_files(TESTS) if p != TESTS / "cli_runner.py"]
    hits = offending_lines(files, CLI_RUNNERS)
    assert not hits, (
        "run `bioaccel` through tests/cli_runner.py (invoke: in process; run_process or "
        "COMMAND: a child):\n" + "\n".join(hits)
    )


# -- one data helper --------------------------------------------------------------------------
DATA_PATHS = re.compile(
    r"[\"']bioaccel/data\b|[\"']bioaccel[\"']\s*/\s*[\"']data[\"']"
    r"|__file__\)(?:\.resolve\(\))?\.parent\s*/\s*[\"']data[\"']|[\"']shared[\"']\s*/\s*[\"']msa[\"']"
)
#: mentions of the data folder that read no data
ALLOWED_DATA_PATHS = {
    ("tests/core/test_readme_layout.py", '{"bioaccel/data"}'): "the README's layout map",
}


def test_data_is_found_through_the_one_data_helper():
    files = [p for p in python_files(TESTS) if p != TESTS / "datasets.py"]
    hits = offending_lines(files, DATA_PATHS, ALLOWED_DATA_PATHS)
    assert not hits, (
        "find data through tests/datasets.py (bundled(...) for bioaccel/data, BALIBASE, the "
        "fetchers):\n" + "\n".join(hits)
    )


# -- every skip through the strict check -------------------------------------------------------
SKIPS = re.compile(
    r"pytest\.skip\(|importorskip\(|mark\.skipif\b|mark\.skip\b|pytest\.xfail\(|mark\.xfail\b"
    r"|unittest\.skip"
)

#: skips outside tests/datasets.py, each with the reason it is not a strict-mode failure
ALLOWED_SKIPS = {
    ("tests/conftest.py", 'pytest.mark.skip(reason="needs a real CUDA GPU'): (
        "gpu-marked tests need a real GPU; scripts/gpu-check.sh runs them on one with "
        "BIOACCEL_GPU_TESTS=1, and CI has none"
    ),
    ("tests/msa/test_msa_gpu.py", "numba_msa_kernel_off_on_real_gpus = pytest.mark.xfail("): (
        "a known failure on real GPUs only (the Numba MSA kernel's paths there), strict: it "
        "fails as XPASS once a GPU run passes; never a skip, never on CI"
    ),
}


def test_every_skip_goes_through_the_strict_check():
    files = [p for p in python_files(TESTS) if p != TESTS / "datasets.py"]
    hits = offending_lines(files, SKIPS, ALLOWED_SKIPS)
    assert not hits, (
        "skip through tests.datasets.unavailable (missing: fails under "
        "BIOACCEL_STRICT_TESTS=1) or not_applicable (a condition), or list it in "
        "ALLOWED_SKIPS with its reason:\n" + "\n".join(hits)
    )


def test_unavailable_fails_in_strict_mode_and_not_applicable_never_does(monkeypatch):
    monkeypatch.setattr(datasets, "STRICT", True)
    with pytest.raises(pytest.fail.Exception, match="BIOACCEL_STRICT_TESTS=1: required here"):
        datasets.unavailable("R is not installed")
    with pytest.raises(pytest.fail.Exception, match="no_such_module_here"):
        datasets.require("no_such_module_here")
    with pytest.raises(pytest.skip.Exception, match="does not apply here: root"):
        datasets.not_applicable("root")
    monkeypatch.setattr(datasets, "STRICT", False)
    with pytest.raises(pytest.skip.Exception, match="R is not installed"):
        datasets.unavailable("R is not installed")


# -- reasons, not tracker numbers --------------------------------------------------------------
TRACKER = re.compile(r"\bissues? \d+|(?<![\w#&])#\d{1,4}\b|\bitems? \d+", re.I)

#: where source lives (CHANGELOG.md, the one place for history, is not among them)
SOURCE_ROOTS = [
    "bioaccel",
    "tests",
    "benchmarks",
    "csrc",
    "R",
    "workflows",
    "scripts",
    "snakemake_scheduler_plugin_bioaccel",
]
SOURCE_FILES = ["README.md", "setup.py", "pyproject.toml"]
SOURCE_SUFFIXES = {
    ".py", ".pyi", ".R", ".Rd", ".cpp", ".hpp", ".inc", ".cu", ".h", ".sh", ".smk", ".md",
    ".yaml", ".yml", ".toml", ".cfg",
}  # fmt: skip
#: matches that are no tracker number
ALLOWED_NUMBERS = {
    ("R/tests/testthat/test-cli.R", '"\\u00e9t\\u00e9 #1"'): "a sequence id with a '#' in it",
}


def source_files() -> list[Path]:
    out = [REPO / f for f in SOURCE_FILES if (REPO / f).exists()]
    for root in SOURCE_ROOTS:
        for p in (REPO / root).rglob("*"):
            rel = p.relative_to(REPO)
            if SKIPPED_DIRS & set(rel.parts) or rel.parts[:2] == ("bioaccel", "data"):
                continue
            if p.is_file() and (p.suffix in SOURCE_SUFFIXES or p.name == "Snakefile"):
                out.append(p)
    return sorted(out)


def test_code_gives_reasons_not_tracker_numbers():
    files = [p for p in source_files() if p != HERE]
    assert len(files) > 100, files  # the walk sees the tree
    hits = offending_lines(files, TRACKER, ALLOWED_NUMBERS)
    assert not hits, (
        "say the reason in words (the tracker's numbers mean nothing in the code; history "
        "goes in CHANGELOG.md):\n" + "\n".join(hits)
    )


def test_the_tracker_rule_catches_each_spelling():
    for text in ("(issue 12)", "issue 15 item 3", "see #17", "Issues 20 and 21", "-- item 4:"):
        assert TRACKER.search(text), text
    for text in ('"#1b9e77"', "'#666666'", "x = a#1", "tissue 5"):
        assert not TRACKER.search(text), text


# -- the lint gate, before each commit and in scripts/test.sh ----------------------------------
def test_pre_commit_runs_the_lint_gate_with_local_hooks_only():
    import yaml

    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    assert [r["repo"] for r in config["repos"]] == ["local"]  # nothing fetched from a network
    hooks = {h["id"]: h for h in config["repos"][0]["hooks"]}
    assert {"ruff-check", "ruff-format", "clang-format", "mypy"} <= set(hooks)
    files = re.compile(hooks["clang-format"]["files"])
    for path in ("csrc/align/x.cpp", "csrc/include/y.hpp", "csrc/msa/z.inc"):
        assert files.search(path), path
    for path in (*(REPO / "bioaccel" / "kernels").glob("*.cu"), *(TESTS / "cuda_host").glob("*")):
        assert files.search(path.relative_to(REPO).as_posix()), path
    gate = (REPO / "scripts" / "test.sh").read_text()
    for step in ("ruff check", "ruff format --check", "mypy", "'bioaccel/kernels/*.cu'"):
        assert step in gate, step
