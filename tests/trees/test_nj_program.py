"""The low-memory tree as a program of its own (``bioaccel-nj``, bioaccel.trees._program): the
``bioaccel`` process checks the input, then hands its process to the program, which joins in
the float32 triangle and little else. Its trees are the in-process path's byte for byte from
every input it takes; its errors are the in-process path's words (checked before the hand-over);
it leaves no temporary file or scratch folder behind, and its peak memory is the triangle plus
a few MiB, where the in-process path adds the interpreter's tens of MiB."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bioaccel.distances import DistanceMatrix, _condensed, _matrix
from bioaccel.distances._ondisk import cdist_header
from bioaccel.trees._program import IN_PROCESS_ENV, joiner_program
from tests.cli_runner import COMMAND
from tests.datasets import child_env, unavailable

if joiner_program() is None:
    unavailable("bioaccel-nj was not built (setup.py build_ext builds it)")


#: the ``bioaccel`` program as users run it (its entry point hands the process over)
BIOACCEL = list(COMMAND)


def _env(in_process: bool, **overrides) -> dict[str, str]:
    """The child's environment: the program path, or the in-process one when asked."""
    env = child_env(**overrides)
    env.pop(IN_PROCESS_ENV, None)
    if in_process:
        env[IN_PROCESS_ENV] = "1"
    return env


def _bioaccel(*args, in_process=False, cwd=None, **env_overrides):
    """``bioaccel ARGS``: (exit status, stdout, stderr)."""
    proc = subprocess.run(
        [*BIOACCEL, *map(str, args)],
        capture_output=True,
        env=_env(in_process, **env_overrides),
        cwd=cwd,
    )
    return proc.returncode, proc.stdout, proc.stderr.decode()


def _points(n: int, seed: int = 7) -> DistanceMatrix:
    x = np.random.default_rng(seed).random((n, 5))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    ids = [f"t{i}" for i in range(n)]
    ids[1], ids[2] = "a name with spaces", "it's (odd):x"  # quoted in Newick
    return DistanceMatrix(d, ids)


def _write_cdist(path: Path, dm: DistanceMatrix, width: int) -> None:
    dtype = "<f4" if width == 4 else "<f8"
    path.write_bytes(cdist_header(dm.ids, width) + dm.condensed().astype(dtype).tobytes())


def _inputs(tmp_path: Path, dm: DistanceMatrix) -> dict[str, Path]:
    paths = {
        "cdist float32": tmp_path / "m4.cdist",
        "cdist float64": tmp_path / "m8.cdist",
        "npy": tmp_path / "m.npy",
        "phylip square": tmp_path / "sq.phy",
        "phylip lower": tmp_path / "lo.phy",
    }
    _write_cdist(paths["cdist float32"], dm, 4)
    _write_cdist(paths["cdist float64"], dm, 8)
    dm.write(paths["npy"])
    dm.write(paths["phylip square"], "phylip")
    dm.write(paths["phylip lower"], "phylip-lower")
    return paths


@pytest.mark.parametrize(
    "kind", ["cdist float32", "cdist float64", "npy", "phylip square", "phylip lower"]
)
def test_program_writes_the_in_process_tree(tmp_path, kind):
    """Across the strip blocks of the square readers (n = 600 > 256) and with labels that
    need quotes: the same Newick bytes, the same message, no scratch left."""
    source = _inputs(tmp_path, _points(600))[kind]
    out, want = tmp_path / "out.nwk", tmp_path / "want.nwk"
    rc, _, err = _bioaccel("tree", source, "--low-memory", "-t", "2", "-o", out)
    assert rc == 0, err
    rc, _, want_err = _bioaccel(
        "tree", source, "--low-memory", "-t", "2", "-o", want, in_process=True
    )
    assert rc == 0, want_err
    assert out.read_bytes() == want.read_bytes()
    assert "'it''s (odd):x'" in out.read_text()
    assert err == want_err.replace("want.nwk", "out.nwk") == f"wrote nj tree of 600 tips to {out}\n"
    assert not list(tmp_path.glob(".*"))  # no scratch folder, no temporary file


def test_program_from_sequences_stdout_and_clamp(tmp_path):
    """Real sequences (dada2's 16S, the first 150) streamed to a scratch .cdist and joined by
    the program, to stdout, with --clamp-negative: the in-process tree's bytes."""
    import gzip

    from tests.datasets import dada2_16s

    text = gzip.decompress(dada2_16s().read_bytes()).decode()
    fasta = tmp_path / "16s.fa"
    fasta.write_text(">" + ">".join(text.split(">")[1:151]))
    scratch = tmp_path / "tmp"  # stdout: the scratch folder goes to TMPDIR
    scratch.mkdir()
    args = ("tree", fasta, "--low-memory", "-m", "mash", "--clamp-negative", "-o", "-")
    rc, got, err = _bioaccel(*args, cwd=tmp_path, TMPDIR=str(scratch))
    assert rc == 0, err
    rc, want, _ = _bioaccel(*args, in_process=True, cwd=tmp_path)
    assert rc == 0 and got == want and got.endswith(b";\n")
    assert "wrote nj tree of 150 tips to stdout" in err
    assert not list(tmp_path.glob(".*")) and not list(scratch.iterdir())


def test_program_refuses_what_the_in_process_path_refuses(tmp_path):
    """Bad values are refused before the hand-over, in the in-process path's words, leaving
    no output and no scratch folder; a missing output folder is named."""
    dm = _points(40)
    cases = {}
    negative = dm.condensed()
    negative[100] = -1.0
    cases["negative.cdist"] = negative
    nan = dm.condensed()
    nan[57] = np.nan
    cases["nan.cdist"] = nan
    huge = dm.condensed()  # float64 past float32's range: rounded to Inf as it is read
    huge[300] = 1e300
    cases["huge.cdist"] = huge
    for name, values in cases.items():
        (tmp_path / name).write_bytes(cdist_header(dm.ids, 8) + values.astype("<f8").tobytes())
    square = dm.data.copy()
    square[30, 3] += 0.5  # asymmetric, in the lower part of row 30
    (tmp_path / "asym.phy").write_text(
        "40\n"
        + "".join(
            f"t{i} " + " ".join(map(repr, row)) + "\n" for i, row in enumerate(square.tolist())
        )
    )
    inf = dm.data.copy()
    inf[5, 9] = inf[9, 5] = np.inf
    (tmp_path / "inf.phy").write_text(
        "40\n"
        + "".join(f"t{i} " + " ".join(map(repr, row)) + "\n" for i, row in enumerate(inf.tolist()))
    )
    too_big = dm.data.copy()  # finite, but past float32: named as read, not as Inf
    too_big[2, 30] = too_big[30, 2] = 1e300
    (tmp_path / "too_big.phy").write_text(
        "40\n"
        + "".join(
            f"t{i} " + " ".join(map(repr, row)) + "\n" for i, row in enumerate(too_big.tolist())
        )
    )
    for name in [*cases, "asym.phy", "inf.phy", "too_big.phy"]:
        out = tmp_path / f"{name}.nwk"
        rc, _, err = _bioaccel("tree", tmp_path / name, "--low-memory", "-o", out)
        rc2, _, want = _bioaccel(
            "tree", tmp_path / name, "--low-memory", "-o", out, in_process=True
        )
        assert rc == rc2 == 2 and err == want and err.startswith("bioaccel: error: "), (
            name,
            err,
            want,
        )
        assert not out.exists()
    assert (
        "'t2'/'t30' = 1e+300 is past float32's range"
        in _bioaccel("tree", tmp_path / "too_big.phy", "--low-memory", "-o", tmp_path / "x.nwk")[2]
    )
    assert (
        "is nan"
        in _bioaccel("tree", tmp_path / "nan.cdist", "--low-memory", "-o", tmp_path / "x.nwk")[2]
    )
    assert (
        "not symmetric"
        in _bioaccel("tree", tmp_path / "asym.phy", "--low-memory", "-o", tmp_path / "x.nwk")[2]
    )
    assert not list(tmp_path.glob(".*"))
    _write_cdist(tmp_path / "ok.cdist", dm, 4)
    rc, _, err = _bioaccel(
        "tree", tmp_path / "ok.cdist", "--low-memory", "-o", tmp_path / "no" / "t.nwk"
    )
    assert rc == 2 and err.startswith("bioaccel: error: cannot write ") and "does not exist" in err


def test_two_taxa_are_joined_in_process(tmp_path):
    dm = DistanceMatrix([[0, 3.0], [3.0, 0]], ["a", "b"])
    _write_cdist(tmp_path / "two.cdist", dm, 4)
    rc, out, err = _bioaccel("tree", tmp_path / "two.cdist", "--low-memory", "-o", "-")
    assert rc == 0, err
    assert out == b"(a:1.5,b:1.5);\n"


def test_strips_give_the_memory_triangle(tmp_path, monkeypatch):
    """TriangleFile's mirror (strips of the file plus the block's own rows) is the in-memory
    triangle's, at block sizes that cut the matrix in many ways; the file holds its values."""
    dm = _points(53)
    phy = tmp_path / "m.phy"
    dm.write(phy, "phylip")
    want = DistanceMatrix.read_condensed(phy).values
    for strip in (1, 5, 16, 64):
        monkeypatch.setattr(_condensed.TriangleFile, "STRIP", strip)
        ids, triangle = _matrix.write_triangle_file(phy, tmp_path / f"t{strip}.f32")
        assert ids == dm.ids and triangle.layout == "upper"
        assert np.array_equal(np.fromfile(tmp_path / f"t{strip}.f32", dtype="<f4"), want)
    square = dm.data.copy()
    square[40, 2] *= 1.001
    text = "53\n" + "".join(
        f"{name} " + " ".join(map(repr, row)) + "\n" for name, row in zip(dm.ids, square.tolist())
    )
    phy.write_text(text.replace("a name with spaces", "s1").replace("it's (odd):x", "s2"))
    with pytest.raises(Exception) as in_memory:
        DistanceMatrix.read_condensed(phy)
    for strip in (1, 7, 64):
        monkeypatch.setattr(_condensed.TriangleFile, "STRIP", strip)
        with pytest.raises(type(in_memory.value)) as streamed:
            _matrix.write_triangle_file(phy, tmp_path / "x.f32")
        assert str(streamed.value) == str(in_memory.value)


#: runs argv[1:] and prints its peak RSS in KiB: a small process of its own measures, as GNU
#: time does (a child started from the large test process could report that one's pages)
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
)


def _peak_mib(*args, in_process=False) -> float:
    """Peak resident memory (MiB) of one ``bioaccel`` run, from the kernel's own count."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *BIOACCEL, *map(str, args)],
        env=_env(in_process),
        capture_output=True,
        text=True,
    )
    peak_kib, code = out.stdout.split()
    assert code == "0", out.stderr
    return int(peak_kib) / 1024


@pytest.mark.slow
def test_program_peak_is_the_triangle(tmp_path):
    """n = 6,000 from a float32 .cdist: the triangle is 68.7 MiB. The process's peak (the
    kernel's count, over the interpreter before the hand-over and the program after it) is the
    triangle plus under 16 MiB; the in-process path's is the triangle plus the interpreter's
    tens of MiB."""
    n = 6000
    x = np.random.default_rng(3).random((n, 4))
    path = tmp_path / "m.cdist"
    with open(path, "wb") as f:
        f.write(cdist_header([f"t{i}" for i in range(n)], 4))
        for i in range(n - 1):
            f.write(np.sqrt(((x[i + 1 :] - x[i]) ** 2).sum(-1)).astype("<f4").tobytes())
    triangle = n * (n - 1) // 2 * 4 / 2**20
    program = _peak_mib("tree", path, "--low-memory", "-t", "1", "-o", tmp_path / "a.nwk")
    in_process = _peak_mib(
        "tree", path, "--low-memory", "-t", "1", "-o", tmp_path / "b.nwk", in_process=True
    )
    assert (tmp_path / "a.nwk").read_bytes() == (tmp_path / "b.nwk").read_bytes()
    assert program < triangle + 16, (program, triangle)
    assert in_process > program + 20, (in_process, program)


def test_a_full_disk_is_refused_before_reading(tmp_path, monkeypatch):
    """The scratch triangle's size is checked against the free space first: one message
    naming the folder, the need and what is free, and no scratch file left."""
    import shutil
    from collections import namedtuple

    dm = _points(300)
    phy = tmp_path / "m.phy"
    dm.write(phy, "phylip")
    scratch = tmp_path / ".scratch"
    scratch.mkdir()
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(OSError, match=r"300 taxa needs 0\.2 MiB .* 0\.0 MiB free") as err:
        _matrix.write_triangle_file(phy, scratch / "triangle.f32")
    assert str(tmp_path) in str(err.value) and err.value.errno == 28
    assert not list(scratch.iterdir())


def _joining_program(tmp_path, n: int, seed: int, preexec_fn=None):
    """`bioaccel tree big.cdist --low-memory` on n random taxa, returned once the process
    has handed itself over to bioaccel-nj (reading and joining then take seconds)."""
    import time

    x = np.random.default_rng(seed).random((n, 4))
    rows = [np.sqrt(((x[i + 1 :] - x[i]) ** 2).sum(-1)) for i in range(n - 1)]
    path = tmp_path / "big.cdist"
    path.write_bytes(
        cdist_header([f"t{i}" for i in range(n)], 4) + np.concatenate(rows).astype("<f4").tobytes()
    )
    proc = subprocess.Popen(
        [*BIOACCEL, "tree", str(path), "--low-memory", "-o", str(tmp_path / "t.nwk")],
        stderr=subprocess.PIPE,
        env=_env(False),
        preexec_fn=preexec_fn,
    )
    deadline = time.time() + 60
    while time.time() < deadline:  # the hand-over: the process is the program now
        try:
            if Path(f"/proc/{proc.pid}/exe").resolve().name == "bioaccel-nj":
                break
        except OSError:
            pass
        time.sleep(0.02)
    time.sleep(0.05)
    assert proc.poll() is None
    return proc


@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stop_signal_while_joining_leaves_nothing(tmp_path, sig, status):
    """Before: Ctrl-C while bioaccel-nj joined (the bioaccel process had handed itself over)
    killed it silently: exit 130, but the scratch folder (the whole float32 triangle from
    PHYLIP input) and the output's temporary file stayed. Now the program says
    'interrupted; nothing written' and removes both, as the bioaccel command does."""
    import signal

    proc = _joining_program(tmp_path, 4000, seed=3)
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(30) == status
    assert proc.stderr.read().decode() == "bioaccel: interrupted; nothing written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.cdist"]


@pytest.mark.parametrize("sig", ["SIGHUP", "SIGINT"])
def test_a_signal_ignored_at_start_stays_ignored(tmp_path, sig):
    """Before: the program installed its stop handlers over an inherited SIG_IGN, so
    `nohup bioaccel tree --low-memory ...` died when the terminal closed (SIGHUP), and a
    script's `bioaccel tree ... &` on the terminal's Ctrl-C (SIGINT). Now an ignored signal
    stays ignored and the run finishes."""
    import signal

    signum = getattr(signal, sig)
    proc = _joining_program(
        tmp_path, 3000, seed=5, preexec_fn=lambda: signal.signal(signum, signal.SIG_IGN)
    )
    proc.send_signal(signum)
    assert proc.wait(60) == 0, proc.stderr.read().decode()
    assert (tmp_path / "t.nwk").read_text().count("t") == 3000


@pytest.mark.parametrize("in_process", [False, True])
def test_a_refused_distance_keeps_its_model_hint_and_leaves_no_matrix(tmp_path, in_process):
    """Before: `tree aln.fa -m jc69 --low-memory --matrix-output m.cdist` on a saturated
    pair left m.cdist behind and said "no model made it here to change" (the streamed file
    had lost its model). Now the message is the exact path's and nothing is left."""
    aln = tmp_path / "sat.fa"
    aln.write_text(
        ">a\n"
        + "ACGT" * 6
        + "\n>b\n"
        + "CATG" * 6
        + "\n>c\n"
        + "ACGT" * 5
        + "ACGA\n>d\n"
        + "ACGT" * 6
        + "\n"
    )
    exact = _bioaccel("tree", aln, "-m", "jc69", "-o", tmp_path / "e.nwk")
    status, _, said = _bioaccel(
        *("tree", aln, "-m", "jc69", "--low-memory"),
        *("--matrix-output", tmp_path / "m.cdist", "-o", tmp_path / "t.nwk"),
        in_process=in_process,
    )
    assert status == 2 and said == exact[2] and "past jc69's saturation" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sat.fa"]
