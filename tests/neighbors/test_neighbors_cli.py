"""``bioaccel neighbors``: the TSV and .npz contract, shards and their merge, and bad input
(one line, exit 2, nothing written)."""

from __future__ import annotations

import subprocess

import pytest

from bioaccel.neighbors import neighbors, read_neighbors
from tests.cli_runner import COMMAND, invoke
from tests.datasets import child_env, not_applicable
from tests.neighbor_cases import as_dict, families


@pytest.fixture
def reads(tmp_path):
    seqs = families(21, 4, 15, 60, 4)
    path = tmp_path / "reads.fa"
    path.write_text("".join(f">r{k};size={100 - k};\n{s}\n" for k, s in enumerate(seqs)))
    return path, seqs


def test_tsv_lines_are_the_python_pairs(reads, tmp_path):
    path, seqs = reads
    res = invoke("neighbors", path, "-d", "3", "-o", tmp_path / "p.tsv", "-t", "1")
    assert res.exit_code == 0, res.output
    nb = neighbors(seqs, max_distance=3)
    want = "".join(f"r{a}\tr{b}\t{d}\n" for a, b, d in zip(nb.i, nb.j, nb.distance))
    assert (tmp_path / "p.tsv").read_text() == want
    assert "wrote" in res.stderr and res.stdout == ""
    res = invoke("neighbors", path, "-d", "3", "-o", "-")
    assert res.exit_code == 0 and res.stdout == want


def test_underscore_annotation_strips_swarms_default_suffix(tmp_path):
    """swarm's default headers carry the abundance as ``_N``: with --abundance-annotation
    underscore the table's ids lose it (``x_1_7`` is ``x_1``); a header without one is
    refused naming the record, and so are two that become one id."""
    seqs = families(5, 3, 10, 40, 3)
    path = tmp_path / "u.fa"
    names = [f"x_{k}_{k + 7}" for k in range(len(seqs))]
    path.write_text("".join(f">{n}\n{s}\n" for n, s in zip(names, seqs)))
    res = invoke(
        "neighbors",
        path,
        "-d",
        "3",
        "-o",
        tmp_path / "u.tsv",
        "--abundance-annotation",
        "underscore",
    )
    assert res.exit_code == 0, res.output
    nb = neighbors(seqs, max_distance=3)
    want = "".join(f"x_{a}\tx_{b}\t{d}\n" for a, b, d in zip(nb.i, nb.j, nb.distance))
    assert want and (tmp_path / "u.tsv").read_text() == want
    # without the option the ids keep their suffix
    res = invoke("neighbors", path, "-d", "3", "-o", "-")
    assert res.stdout.split("\t", 1)[0] == names[int(nb.i[0])]
    for text, culprit in (
        (">a_3\nACGT\n>b\nACGA\n", "record 2 'b'"),
        (">a_3\nACGT\n>b_0\nACGA\n", "record 2 'b_0'"),
        (">a_3\nACGT\n>a_1\nACGA\n", "both 'a'"),
    ):
        bad = tmp_path / "bad.fa"
        bad.write_text(text)
        out = tmp_path / "bad.tsv"
        res = invoke("neighbors", bad, "-o", out, "--abundance-annotation", "underscore")
        assert res.exit_code == 2 and culprit in res.stderr, res.output
        assert len(res.stderr.strip().splitlines()) == 1 and not out.exists()


def test_npz_round_trip_and_shards_merge_to_the_same_bytes(reads, tmp_path):
    path, _ = reads
    assert invoke("neighbors", path, "-d", "2", "-o", tmp_path / "all.tsv").exit_code == 0
    assert invoke("neighbors", path, "-d", "2", "-o", tmp_path / "all.npz").exit_code == 0
    for k in (1, 2, 3):
        res = invoke(
            "neighbors", path, "-d", "2", "--shard", f"{k}/3", "-o", tmp_path / f"s{k}.tsv"
        )
        assert res.exit_code == 0, res.output
        assert (
            invoke(
                "neighbors", path, "-d", "2", "--shard", f"{k}/3", "-o", tmp_path / f"s{k}.npz"
            ).exit_code
            == 0
        )
    shards = [tmp_path / f"s{k}.tsv" for k in (1, 2, 3)]
    res = invoke("neighbors", "--merge", *shards, "-o", tmp_path / "m.tsv")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "m.tsv").read_bytes() == (tmp_path / "all.tsv").read_bytes()
    res = invoke(
        "neighbors",
        "--merge",
        *[tmp_path / f"s{k}.npz" for k in (3, 1, 2)],
        "-o",
        tmp_path / "m.npz",
    )
    assert res.exit_code == 0, res.output
    assert as_dict(read_neighbors(tmp_path / "m.npz")) == as_dict(
        read_neighbors(tmp_path / "all.npz")
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["-d", "-1"], "expected a number of edits >= 0"),
        (["-d", "1.5"], "whole numbers of edits"),
        (["-d", "x"], "expected a number"),
        (["-d", "1", "--shard", "3/2"], "--shard '3/2'"),
        (["-d", "1", "--shard", "0/2"], "--shard '0/2'"),
        (["-d", "1", "--shard", "a"], "--shard 'a'"),
        (["-d", "1", "-k", "5"], "applies to -m mash"),
        (["-m", "mash"], "--max-distance"),
        (["-d", "1", "--alphabet", "dna", "PROT"], "expected a dna letter"),
        (["-d", "1", "-b", "cupy"], "cupy"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(reads, tmp_path, args, message):
    path, _ = reads
    source = path
    if "PROT" in args:
        args = [a for a in args if a != "PROT"]
        source = tmp_path / "prot.fa"
        source.write_text(">p\nMKVLEWWPPQ\n>q\nMKVLEWWPPE\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    res = subprocess.run(
        [
            *COMMAND,
            "neighbors",
            str(source),
            *args,
            "-o",
            str(tmp_path / "x.tsv"),
        ],
        capture_output=True,
        text=True,
        env=child_env(),
    )
    if "cupy" in args and res.returncode == 0:
        not_applicable("CuPy runs here")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: "), res.stderr
    assert message in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_missing_file_wrong_extension_and_aligned_input(reads, tmp_path):
    path, _ = reads
    res = invoke("neighbors", tmp_path / "nope.fa", "-d", "1", "-o", tmp_path / "x.tsv")
    assert res.exit_code == 2 and "nope.fa" in res.stderr
    res = invoke("neighbors", path, "-d", "1", "-o", tmp_path / "x.csv")
    assert res.exit_code == 2 and ".csv" in res.stderr
    aln = tmp_path / "aln.fa"
    aln.write_text(">a\nAC-GT\n>b\nACGGT\n")
    res = invoke("neighbors", aln, "-d", "1", "-o", tmp_path / "x.tsv")
    assert res.exit_code == 2 and "--ungap" in res.stderr
    res = invoke("neighbors", aln, "-d", "1", "--ungap", "-o", tmp_path / "x.tsv")
    assert res.exit_code == 0 and (tmp_path / "x.tsv").read_text() == "a\tb\t1\n"
    res = invoke("neighbors", path, "-o", path, "-d", "1")
    assert res.exit_code == 2
    assert not (tmp_path / "x.csv").exists()


def test_ctrl_c_while_writing_exits_130_and_leaves_nothing(reads, tmp_path, monkeypatch):
    import bioaccel.neighbors._edges as edges

    path, _ = reads

    def interrupted(nb, f, threads=0, chunk=0):
        f.write(b"partial\tline\t1\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(edges, "write_tsv", interrupted)
    before = sorted(p.name for p in tmp_path.iterdir())
    res = invoke("neighbors", path, "-d", "1", "-o", tmp_path / "p.tsv")
    assert res.exit_code == 130, res.output
    assert "interrupted" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_whole_number_written_as_a_decimal_is_edits(reads, tmp_path):
    """Before: -d 2.0 was refused as not whole while Python's max_distance=2.0 ran. Now the
    CLI takes it as 2 edits, as Python does; 2.5, nan and inf stay refused."""
    path, _ = reads
    for d in ("2", "2.0"):
        assert invoke("neighbors", path, "-d", d, "-o", tmp_path / f"p{d}.tsv").exit_code == 0
    assert (tmp_path / "p2.0.tsv").read_bytes() == (tmp_path / "p2.tsv").read_bytes()
    for d in ("2.5", "nan", "inf"):
        res = invoke("neighbors", path, "-d", d, "-o", tmp_path / "x.tsv")
        assert res.exit_code == 2 and "whole numbers of edits" in res.stderr
