"""Running the Snakemake workflows of workflows/ in a scratch copy, on virtual GPUs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.datasets import child_env


def copy_workflow(workflow: Path, dest: Path) -> Path:
    """The parts of ``workflow`` a run needs, copied into ``dest`` (returned)."""
    for part in ("workflow", "config", ".test", "profiles"):
        shutil.copytree(workflow / part, dest / part)
    return dest


def run(exe, cwd, r_library, *args, gpus="4"):
    """``snakemake --cores 2 ARGS`` in ``cwd`` with the R package library, a private run
    directory and ``gpus`` virtual GPUs (none when empty)."""
    env = child_env(R_LIBS=str(r_library), BIOACCEL_RUN_DIR=str(cwd / "run"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if gpus:
        env["BIOACCEL_VIRTUAL_GPUS"] = gpus
    return subprocess.run([exe, "--cores", "2", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1200)
