"""``threads``: one check (bioaccel._core.threads.check_threads) at every entry point -- Python
functions and the command line -- and the C++ core never hands an absurd value to OpenMP.

Before: ``threads=10**6`` crashed the process (segmentation fault, no message),
``threads=-1`` was accepted in Python, ``threads=2**40`` gave a long TypeError.
The crashing cases run in a child process, so a regression fails the test instead of
killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bioaccel
from bioaccel._core.threads import MAX_THREADS_PER_CPU, check_threads, max_threads
from bioaccel.errors import ThreadCountError
from tests.cli_runner import run_process
from tests.datasets import child_env

CAP = MAX_THREADS_PER_CPU * (os.cpu_count() or 1)
DNA_SEQS = ["ACGTACGTAC", "ACGTACGTAT", "ACGAACGTAC", "TCGAACGTTC"]


def _entry_points(tmp_path):
    from bioaccel.distances._kmers import kmer_distance_matrix, kmer_rows, sketch
    from bioaccel.distances._ondisk import stream_distances
    from bioaccel.distances._tiles import distance_block

    dm = bioaccel.distance_matrix(DNA_SEQS, "jc69", backend="cpu")
    return {
        "distance_matrix": lambda t: bioaccel.distance_matrix(DNA_SEQS, "k80", threads=t),
        "distance_matrix/edit": lambda t: bioaccel.distance_matrix(DNA_SEQS, "edit", threads=t),
        "distance_block": lambda t: distance_block(DNA_SEQS, "k80", (0, 2), (0, 4), threads=t),
        "stream_distances": lambda t: stream_distances(
            DNA_SEQS, "k80", tmp_path / f"d{t!r}.cdist", threads=t
        ),
        "align_scores": lambda t: bioaccel.align_scores(DNA_SEQS, matrix=(2, -3), threads=t),
        "align": lambda t: bioaccel.align(DNA_SEQS, matrix=(2, -3), threads=t),
        "edit_distances": lambda t: bioaccel.edit_distances(DNA_SEQS, threads=t),
        "nj": lambda t: bioaccel.nj(dm, threads=t),
        "sketch": lambda t: sketch(DNA_SEQS, k=3, size=8, threads=t),
        "kmer_distance_matrix": lambda t: kmer_distance_matrix(DNA_SEQS, "jaccard", k=3, threads=t),
        "kmer_rows": lambda t: kmer_rows(DNA_SEQS, "kmer", k=3, threads=t),
    }


ENTRY_POINTS = [
    "distance_matrix",
    "distance_matrix/edit",
    "distance_block",
    "stream_distances",
    "align_scores",
    "align",
    "edit_distances",
    "nj",
    "sketch",
    "kmer_distance_matrix",
    "kmer_rows",
]
BAD = [-1, CAP + 1, 10**6, 2**40, True, 2.0, "4", None]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_entry_point_refuses_bad_thread_counts(tmp_path, entry):
    call = _entry_points(tmp_path)[entry]
    for bad in BAD:
        with pytest.raises(ThreadCountError) as info:
            call(bad)
        text = str(info.value)
        assert "\n" not in text
        integer = isinstance(bad, int) and not isinstance(bad, bool)
        assert text == (
            f"threads={bad!r} is {'out of range' if integer else 'not an integer'}: expected "
            f"an integer from 0 (all cores) to {CAP} ({MAX_THREADS_PER_CPU} x {os.cpu_count()} "
            "CPUs)"
        )
        assert isinstance(info.value, ValueError)
    call(0)
    call(1)
    call(np.int64(2))
    call(CAP)


def test_check_threads():
    assert max_threads() == CAP
    assert check_threads(0) == 0 and check_threads(np.int32(3)) == 3
    assert type(check_threads(np.int32(3))) is int
    with pytest.raises(ThreadCountError, match=r"^threads=False is not an integer"):
        check_threads(False)


@pytest.mark.parametrize(
    "command",
    [
        ["distance", "{aln}", "-o", "{out}"],
        ["tree", "{aln}", "-o", "{out}"],
        ["align", "{aln}", "--matrix", "2,-3", "-o", "{out}"],
        ["sketch", "{aln}", "-o", "{out}"],
    ],
)
@pytest.mark.parametrize("value", ["1000000", "-1", "abc", str(CAP + 1)])
def test_cli_refuses_bad_thread_counts(tmp_path, command, value):
    aln = tmp_path / "aln.fa"
    aln.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(DNA_SEQS)))
    out = tmp_path / "out.x"
    args = [a.format(aln=aln, out=out) for a in command] + ["-t", value]
    res = run_process(*args)
    assert res.returncode == 2, (res.returncode, res.stderr)
    said = (
        f"threads={int(value)!r} is out of range"
        if value.lstrip("-").isdigit()
        else f"{value!r} is not a number"  # not "out of range": it is no number at all
    )
    assert f"{said}: expected an integer from 0 (all cores) to {CAP}" in res.stderr, res.stderr
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert not out.exists()


def test_native_core_refuses_absurd_thread_counts():
    """Straight into the C++ core, past the Python check: std::invalid_argument, no crash."""
    script = textwrap.dedent("""
        import numpy as np
        from bioaccel import _native
        from bioaccel.backends.cpu import CpuBackend
        from bioaccel.backends.base import DnaData
        from bioaccel.sequences._read import as_batch
        from bioaccel.pairwise._scoring import make_scoring
        b = as_batch(["ACGTACGTAC", "ACGTACGTAT", "ACGAACGTAC"])
        cpu = CpuBackend()
        calls = {
            "edit_distances": lambda t: cpu.edit_distances(b, b, 0, -1, True, t),
            "align_scores": lambda t: cpu.align_scores(b, b, make_scoring((2, -3), 5, 2, b.alphabet),
                                                        0, True, t),
            "dna_counts": lambda t: cpu.dna_counts(DnaData(b.as_alignment()), 0, 3, 0, 3,
                                                   table=False, upper_only=True, threads=t),
            "neighbor_joining": lambda t: _native.neighbor_joining(np.ones((4, 4)) - np.eye(4), t),
            "kmer_sketch": lambda t: _native.kmer_sketch(b.codes, b.offsets, np.zeros(256, np.int8),
                                                         4, 3, True, True, 1, 8, False, t),
        }
        for name, call in calls.items():
            for t in (1_000_000, 100_000, -1):
                try:
                    call(t)
                except ValueError as exc:
                    print(name, t, exc)
                else:
                    print(name, t, "ACCEPTED")
    """)
    res = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=child_env()
    )
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr[-2000:]}"
    lines = res.stdout.splitlines()
    assert len(lines) == 15, res.stdout
    for line in lines:
        name, t, text = line.split(" ", 2)
        assert text == (f"threads={t} is out of range: expected 0 (all cores) to {CAP}"), line
