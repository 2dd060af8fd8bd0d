"""A run leaves the source tree clean: the `.test` workflow of workflows/distances, run in a
copy of the repository's tracked files, adds or changes nothing that git would show (run
outputs -- results, logs, Snakemake state -- are ignored, and none is committed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.datasets import child_env, unavailable

pytestmark = [pytest.mark.workflow, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def git(*args, cwd):
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=child_env(
            GIT_AUTHOR_NAME="t",
            GIT_AUTHOR_EMAIL="t@example.org",
            GIT_COMMITTER_NAME="t",
            GIT_COMMITTER_EMAIL="t@example.org",
        ),
    )


def copy_of_tracked_files(dest: Path) -> Path:
    """The tracked files as they are in the working tree, committed into a fresh repository."""
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if listing.returncode != 0:
        unavailable(f"{REPO} is not a git checkout: {listing.stderr.decode()[-200:]}")
    for name in listing.stdout.decode().split("\0"):
        src = REPO / name
        if name and src.is_file():  # a file deleted but not yet committed is skipped
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "tracked files", cwd=dest)
    return dest


def test_committed_tree_holds_no_run_outputs():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if tracked.returncode != 0:
        unavailable(f"{REPO} is not a git checkout")
    outputs = [
        n
        for n in tracked.stdout.splitlines()
        if {"logs", "results", ".snakemake"} & set(Path(n).parts)
    ]
    assert not outputs, outputs


def test_a_workflow_run_leaves_git_status_clean(tmp_path):
    exe = shutil.which("snakemake")
    if exe is None:
        unavailable("snakemake is not installed (pip install '.[workflows]')")
    if shutil.which("git") is None:
        unavailable("git is not installed")
    repo = copy_of_tracked_files(tmp_path / "repo")
    wd = repo / "workflows" / "distances"
    # the .test configuration without the R report (R is tested elsewhere), kept outside
    # the copy so that it is no new file there itself
    cfg = (wd / ".test/config/config.yaml").read_text()
    no_report = cfg.replace("report:\n  enabled: true", "report:\n  enabled: false")
    assert no_report != cfg
    config = tmp_path / "config.yaml"
    config.write_text(no_report)
    env = child_env(BIOACCEL_RUN_DIR=str(tmp_path / "run"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    proc = subprocess.run(
        [exe, "--cores", "2", "--configfile", str(config)],
        cwd=wd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (wd / "results/merge/distances.cdist").exists()
    assert any((wd / "logs").rglob("*.log")) and (wd / ".snakemake").is_dir()
    status = git("status", "--porcelain", "--untracked-files=all", cwd=repo).stdout
    assert status == "", status
