"""Fixtures of the clustering tests: the neighbour search (bioaccel.neighbors, or the
brute-force stand-in while that package is not in this checkout), swarm and vsearch."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.datasets import bundled, unavailable

DADA2 = bundled("dada2")


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        unavailable(f"{tool} is not installed (apt-get install {tool}; scripts/test.sh does)")
    return path


@pytest.fixture(scope="session")
def swarm_bin() -> str:
    return need("swarm")


@pytest.fixture(scope="session")
def vsearch_bin() -> str:
    return need("vsearch")


@pytest.fixture(scope="session")
def real_amplicons(tmp_path_factory, vsearch_bin) -> Path:
    """The bundled MiSeq reads (both samples), cut to 200 letters and dereplicated with
    ``vsearch --derep_fulllength --sizeout`` (swarm's input)."""
    tmp = tmp_path_factory.mktemp("dada2")
    fastas = []
    for name in ("sam1F", "sam2F"):
        out = tmp / f"{name}.fa"
        subprocess.run(
            [
                vsearch_bin,
                "--quiet",
                "--fastx_filter",
                str(DADA2 / f"{name}.fastq.gz"),
                "--fastq_trunclen",
                "200",
                "--fastaout",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        fastas.append(out.read_text())
    reads = tmp / "reads.fa"
    reads.write_text("".join(fastas))
    derep = tmp / "derep.fa"
    subprocess.run(
        [
            vsearch_bin,
            "--quiet",
            "--derep_fulllength",
            str(reads),
            "--sizeout",
            "--output",
            str(derep),
        ],
        check=True,
        capture_output=True,
    )
    return derep
