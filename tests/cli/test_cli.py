"""The `bioaccel` command: happy paths, and every bad input of the foundation issue gives
one line naming the culprit, a non-zero exit, no traceback and no output file."""

from __future__ import annotations

import os
import stat
import subprocess

import numpy as np
import pytest

import bioaccel
from bioaccel import DistanceMatrix
from tests.cli_runner import COMMAND
from tests.cli_runner import run_process as run
from tests.datasets import child_env, not_applicable


@pytest.fixture
def aln(tmp_path):
    p = tmp_path / "aln.fa"
    p.write_text(
        ">A/Sao_Paulo/1/2009\nACGTACGTAC\n>b\nACGTACGTAT\n>c\nACGAACGTAC\n>d\nTCGAACGTTC\n"
    )
    return p


def test_distance_and_tree(tmp_path, aln):
    out = tmp_path / "d.phy"
    res = run("distance", aln, "-m", "jc69", "-b", "cpu", "-t", "1", "-o", out)
    assert res.returncode == 0, res.stderr
    got = DistanceMatrix.read(out)
    assert got == bioaccel.distance_matrix(aln, "jc69")
    for fmt, ext in (("tsv", "tsv"), ("npy", "npy"), ("npz", "npz"), ("phylip-lower", "phy")):
        p = tmp_path / f"d_{fmt}.{ext}"
        assert run("distance", aln, "-o", p, "--format", fmt).returncode == 0
        assert DistanceMatrix.read(p, fmt).ids == got.ids
    nwk = tmp_path / "t.nwk"
    res = run("tree", aln, "--method", "nj", "-o", nwk, "--matrix-output", tmp_path / "m.phy")
    assert res.returncode == 0, res.stderr
    assert nwk.read_text().strip() == bioaccel.nj(bioaccel.distance_matrix(aln)).to_newick()
    # a matrix as input gives the same tree
    res = run("tree", tmp_path / "m.phy", "-o", tmp_path / "t2.nwk")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "t2.nwk").read_text() == nwk.read_text()
    res = run("tree", aln, "--method", "upgma", "-o", tmp_path / "u.nwk")
    assert res.returncode == 0 and (tmp_path / "u.nwk").read_text().count("(") == 3


BAD_INPUTS = {
    "empty": ("", "file is empty"),
    "not_sequences": ("hello world\n", "not a sequence file"),
    "unequal": (">a\nACGT\n>b\nACG\n", "record 'b' has length 3, but 'a' has 4"),
    "duplicate": (">a\nACGT\n>a\nACGA\n", "duplicate id 'a': record 1 and record 2"),
    "invalid": (">a\nACGT\n>b\nAC!T\n", "record 'b', position 3: invalid letter '!'"),
    "single": (">a\nACGT\n", "found 1 sequence"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["distance", "tree"])
def test_bad_input(tmp_path, case, command):
    content, message = BAD_INPUTS[case]
    src = tmp_path / "in.fa"
    src.write_text(content)
    out = tmp_path / ("out.nwk" if command == "tree" else "out.phy")
    res = run(command, src, "-o", out)
    assert res.returncode == 2
    assert message in res.stderr
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert str(src) in res.stderr or case in ("unequal",) or "record" in res.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fa"]  # no temp files either


@pytest.mark.parametrize(
    "args,message",
    [
        (["-m", "k81x"], "unknown distance model 'k81x'"),
        (["-b", "tpu"], "Invalid value for '-b' / '--backend'"),
    ],
)
def test_unknown_model_or_backend(tmp_path, aln, args, message):
    out = tmp_path / "o.phy"
    res = run("distance", aln, "-o", out, *args)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr
    assert not out.exists()


def test_unavailable_backend_is_named(tmp_path, aln):
    reasons = bioaccel.available_backends()
    missing = [name for name in ("cupy", "numba-cuda") if reasons[name]]
    if not missing:
        not_applicable("every GPU backend is available here")
    out = tmp_path / "o.phy"
    env = {k: v for k, v in child_env().items() if k != "NUMBA_ENABLE_CUDASIM"}
    res = subprocess.run(
        [
            *COMMAND,
            "distance",
            str(aln),
            "-o",
            str(out),
            "-b",
            missing[0],
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 2 and f"backend '{missing[0]}' is unavailable" in res.stderr
    assert not out.exists()


def test_protein_for_dna_model(tmp_path):
    src = tmp_path / "p.fa"
    src.write_text(">a\nMKVLEF\n>b\nMKVLQF\n")
    res = run("distance", src, "-o", tmp_path / "o.phy")
    assert res.returncode == 2 and "needs nucleotide sequences" in res.stderr


def test_unwritable_output_read_only_dir(tmp_path, aln):
    if os.geteuid() == 0:
        not_applicable("root can write anywhere; the missing-directory case covers it")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    res = run("distance", aln, "-o", ro / "o.phy")
    assert res.returncode == 2 and "cannot write" in res.stderr


def test_unwritable_output_missing_dir(tmp_path, aln):
    out = tmp_path / "missing" / "o.phy"
    res = run("distance", aln, "-o", out)
    assert res.returncode == 2
    assert f"cannot write '{out}'" in res.stderr and "Traceback" not in res.stderr
    assert not out.parent.exists()


def test_missing_input(tmp_path):
    res = run("tree", tmp_path / "nope.fa", "-o", tmp_path / "t.nwk")
    assert res.returncode == 2 and "no such file" in res.stderr


def test_doctor(tmp_path):
    res = run("doctor", "--no-r")
    assert res.returncode == 0 and "backend:reference" in res.stdout
    res = run("doctor", "--require", "warp-drive")
    assert res.returncode == 2 and "unknown requirement 'warp-drive'" in res.stderr
    res = run("doctor", "--require", "cpu")
    assert res.returncode == 0
    if bioaccel.available_backends()["cupy"]:
        res = run("doctor", "--require", "cupy", "--no-r")
        assert res.returncode == 1 and "broken: cupy" in res.stderr


def test_cupy_fix_matches_driver():
    from bioaccel.config import cupy_fix_for_driver

    assert "cuda12" in cupy_fix_for_driver(12)
    assert "cuda13" in cupy_fix_for_driver(13)
    assert "upgrade the NVIDIA driver" in cupy_fix_for_driver(11)


@pytest.fixture
def proteins(tmp_path):
    p = tmp_path / "p.fa"
    p.write_text(">p1\nMKVLEAGHW\n>p2\nMKILDAGW\n>p3 desc\nWWPPMKV\n")
    return p


def test_align_scores_and_tracebacks(tmp_path, proteins):
    from bioaccel.pairwise._align import align, align_scores

    out = tmp_path / "s.npy"
    res = run("align", proteins, "--mode", "local", "-o", out)
    assert res.returncode == 0, res.stderr
    assert np.array_equal(np.load(out), align_scores(proteins, mode="local"))
    tsv = tmp_path / "a.tsv"
    res = run(
        "align",
        proteins,
        proteins,
        "--traceback",
        "--matrix",
        "BLOSUM80",
        "--gap-open",
        "9",
        "-o",
        tsv,
    )
    assert res.returncode == 0, res.stderr
    rows = [line.split("\t") for line in tsv.read_text().splitlines()[1:]]
    want = align(proteins, proteins, matrix="BLOSUM80", gap_open=9)
    assert [(r[0], r[1], int(r[2]), r[7]) for r in rows] == [
        (a.query_id, a.target_id, a.score, a.cigar) for a in want
    ]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--matrix", "BLOSUM99"], "unknown substitution matrix 'BLOSUM99'"),
        (["--matrix", "2,x"], "expected a matrix name or MATCH,MISMATCH"),
        (["--gap-open", "-3"], "gap_open must be >= 0"),
    ],
)
def test_align_bad_options(tmp_path, proteins, args, message):
    out = tmp_path / "s.npy"
    res = run("align", proteins, "-o", out, *args)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr
    assert not out.exists()


def test_align_letter_missing_from_matrix(tmp_path):
    src = tmp_path / "j.fa"
    src.write_text(">a\nMKV\n>b\nMKJL\n")
    res = run("align", src, "-o", tmp_path / "s.npy")
    assert res.returncode == 2
    assert "letter 'J' of sequence 'b' at position 3 is not in the matrix BLOSUM62" in res.stderr


def test_unaligned_models_and_sketches(tmp_path):
    from bioaccel.distances._kmers import sketch
    from bioaccel.pairwise._edit import edit_distances

    src = tmp_path / "u.fa"
    src.write_text(
        ">a\nACGTACGTTGCAAGGCTACGTACGTTGCAAGGCT\n>b\nACGTACGTTGCAAGGCAACGTACGTTGCAAGGC\n"
        ">c\nTTTTGGGGCCCCAAAATTTTGGGGCCCCAAAA\n"
    )
    out = tmp_path / "e.tsv"
    assert run("distance", src, "-m", "edit", "-o", out).returncode == 0
    assert np.array_equal(DistanceMatrix.read(out).data, edit_distances(src).astype(float))
    sk = tmp_path / "s.npz"
    res = run("sketch", src, "-k", "9", "-s", "50", "-o", sk)
    assert res.returncode == 0, res.stderr
    m = tmp_path / "m.tsv"
    assert run("distance", sk, "-m", "mash", "-o", m).returncode == 0
    assert DistanceMatrix.read(m) == bioaccel.distance_matrix(sketch(src, k=9, size=50), "mash")
    for model in ("kmer", "jaccard"):
        p = tmp_path / f"{model}.npy"
        assert run("distance", src, "-m", model, "-k", "5", "-o", p).returncode == 0
        assert DistanceMatrix.read(p) == bioaccel.distance_matrix(src, model, k=5)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"junk")
    res = run("distance", bad, "-m", "mash", "-o", tmp_path / "x.tsv")
    assert res.returncode == 2 and "not a bioaccel sketch file" in res.stderr


def test_doctor_says_numba_cuda_is_broken_when_it_sees_a_gpu_but_cannot_compile(monkeypatch):
    """A GPU image had an H200 numba-cuda could see and numba-cuda that could compile nothing
    (NumPy 2.5 without np.row_stack): doctor said ok. It compiles a kernel now."""
    import types as pytypes

    from numba import cuda

    from bioaccel.config import collect

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    monkeypatch.setattr(cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuda, "gpus", [pytypes.SimpleNamespace(name=b"NVIDIA H200")], raising=False)

    def broken(*args, **kwargs):
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    monkeypatch.setattr(cuda, "compile_ptx", broken, raising=False)
    check = collect(check_r=False).get("numba-cuda")
    assert not check.ok and "row_stack" in check.detail, check
    monkeypatch.setattr(cuda, "compile_ptx", lambda *a, **k: ("// ptx", None), raising=False)
    check = collect(check_r=False).get("numba-cuda")
    assert check.ok and "compiles; devices: NVIDIA H200" in check.detail, check


@pytest.mark.parametrize("given, want", [(None, "1"), ("3", "3")])
def test_the_command_asks_openblas_for_one_thread_unless_told(given, want):
    """NumPy's OpenBLAS starts threads that spin on other cores at import; the command does
    no BLAS work, so it asks for one (bioaccel/cli/__init__.py), and keeps a value the user
    set. Counted as the process's threads once NumPy is imported (Linux: /proc)."""
    env = child_env()
    env.pop("OPENBLAS_NUM_THREADS", None)
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = (
        "import bioaccel.cli, numpy, os; "
        "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))"
    )
    value, threads = subprocess.run(
        [COMMAND[0], "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert value == want
    if given is None:
        assert threads == "1"  # no BLAS thread beside the interpreter's
