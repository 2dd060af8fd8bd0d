"""Running the Snakemake workflows of workflows/ in a scratch copy, on virtual GPUs."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np

from tests.datasets import child_env

REPO = Path(__file__).resolve().parents[1]
DISTANCES = REPO / "workflows" / "distances"
PHYLOGENY = REPO / "workflows" / "phylogeny"
#: the phylogeny workflow's .test families: name -> file
PHYLOGENY_FILES = {
    "big": "big.fa",
    "mid": "mid.fasta",
    "small": "small.fa",
    "made": "made.fa",
    "single": "single.fa",
}


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
    return subprocess.run(
        [exe, "--cores", "2", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200
    )


def png_pixels(path: Path) -> tuple[int, int]:
    """Decode a PNG's image data (zlib over the IDAT chunks); return width, height."""
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(raw):
        length, kind = struct.unpack(">I4s", raw[pos : pos + 8])
        body = raw[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    pixels = zlib.decompress(idat)
    assert len(pixels) == height * (1 + width * channels * depth // 8)
    rows = np.frombuffer(pixels, np.uint8).reshape(height, -1)[:, 1:]
    assert rows.std() > 0, f"{path.name} is blank"
    return width, height
