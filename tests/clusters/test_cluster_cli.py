"""``bioaccel cluster`` as a user runs it: every output, stdout, bad input (one line, exit
2, nothing written), options that do not go together."""

from __future__ import annotations

import pytest

from tests.cli_runner import invoke as run_cli

AMPLICONS = ">a;size=10\nACGTACGTACGTAAAA\n>b;size=3;x=1\nACGTACGTACGTAAAT\n>size=3;c\nACGTACGTACGTAATT\n>d;size=1\nTTTTACGTACGTAAAA\n>e;size=2;\nGGGGGGGGCCCCAAAA\n>f;size=1\nGGGGGGGGCCCCAAAT\n"


def invoke(*args, cwd):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return run_cli("cluster", *map(str, args))
    finally:
        os.chdir(old)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "amp.fa").write_text(AMPLICONS)
    return tmp_path


def test_every_output_as_swarm_writes_it(work):
    res = invoke(
        "amp.fa",
        "-d",
        "1",
        "-o",
        "otus.txt",
        "--seeds",
        "seeds.fa",
        "--statistics-file",
        "s.tsv",
        "--uclust-file",
        "u.uc",
        "--assignments",
        "a.tsv",
        "-t",
        "1",
        cwd=work,
    )
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    assert (work / "otus.txt").read_text() == (
        "a;size=10 b;size=3;x=1 size=3;c\ne;size=2; f;size=1\nd;size=1\n"
    )
    assert (work / "seeds.fa").read_text() == (
        ">a;size=16;\nACGTACGTACGTAAAA\n>e;size=3;\nGGGGGGGGCCCCAAAA\n>d;size=1;\nTTTTACGTACGTAAAA\n"
    )
    assert (
        work / "s.tsv"
    ).read_text() == "3\t16\ta\t10\t0\t2\t2\n2\t3\te\t2\t1\t1\t1\n1\t1\td\t1\t1\t0\t0\n"
    uc = (work / "u.uc").read_text().splitlines()
    assert uc[2] == "H\t0\t16\t93.8\t+\t0\t0\t16M\tb;size=3;x=1\ta;size=10"
    assert len(uc) == 9
    assert (work / "a.tsv").read_text() == (
        "id\tcluster\tseed\na\t1\ta\nb;x=1\t1\ta\nc\t1\ta\nd\t3\td\ne\t2\te\nf\t2\te\n"
    )


def test_greedy_identity_over_the_shorter_length(tmp_path):
    """--identity-definition shorter: y is x with 3 more letters at its start, an overhang
    (free) rather than 3 edits over 31 letters (0.90 < 0.95)."""
    x = "ACGTTGCAAGGCTTACCGATTGACCATG"
    (tmp_path / "r.fa").write_text(f">x;size=5\n{x}\n>y;size=1\nGGG{x}\n")
    base = ["r.fa", "--method", "greedy", "--identity", "0.95", "-o", "-"]
    res = invoke(*base, cwd=tmp_path)
    assert res.exit_code == 0 and res.stdout == "x;size=5\ny;size=1\n"
    res = invoke(*base, "--identity-definition", "shorter", cwd=tmp_path)
    assert res.exit_code == 0 and res.stdout == "x;size=5 y;size=1\n"


def test_stdout_and_methods(work):
    res = invoke("amp.fa", "-o", "-", cwd=work)
    assert res.exit_code == 0 and res.stdout.count("\n") == 3
    res = invoke("amp.fa", "--method", "linkage", "-d", "4", "-o", "-", cwd=work)
    assert res.exit_code == 0 and res.stdout.count("\n") == 2
    res = invoke("amp.fa", "--method", "greedy", "--identity", "0.9", "-o", "-", cwd=work)
    # c is 2 edits from a over 16 letters: 0.875 < 0.9, a centroid of its own
    assert res.exit_code == 0 and res.stdout.splitlines()[:2] == [
        "a;size=10 b;size=3;x=1",
        "size=3;c",
    ]


BAD = [
    (">a;size=2\nMKVLAAGG\n", [], "position 4: invalid letter 'L'"),
    (
        ">a;size=2\nACGNT\n>b;size=1\nACGT\n",
        ["--differences", "swarm", "-d", "2"],
        "IUPAC code 'N'",
    ),
    (
        ">a;size=2\nACGT\n>b;size=1\nacgu\n",
        [],
        "records 1 ('a;size=2', line 1) and 2 ('b;size=1', line 3) hold the same sequence",
    ),
    (">a;size=2\nACGT\n>b\nACGA\n", [], "record 2 (line 3, 'b'): no abundance annotation"),
    (">a;size=2\nACGT\n>b;size=x\nACGA\n", [], "malformed abundance annotation"),
    (">a;size=0\nACGT\n", [], "abundance 0 is out of range"),
    (">a;size=2\n\n>b;size=1\nACGA\n", [], "empty sequence"),
    (">a;size=2\nACGT\n>a;size=1\nACGA\n", [], "share the id 'a'"),
    ("ACGT\n", [], "expected a FASTA header"),
    ("", [], "file is empty"),
    (">a;size=2\nAC-GT\n", [], "position 3"),
    # swarm's default annotation, read only when asked for (a _N suffix may be an id's)
    (
        ">a_2\nACGT\n>b_1\nACGA\n",
        [],
        "no ';size=N' annotation (2 of 2 records lack one); the header ends in '_N', "
        "swarm's default annotation: give --abundance-annotation underscore",
    ),
    (">a_2\nACGT\n>b\nACGA\n", ["--abundance-annotation", "underscore"], "end in '_N'"),
    (">a_2\nACGT\n>b_x\nACGA\n", ["--abundance-annotation", "underscore"], "'b_x'"),
    (">a_0\nACGT\n", ["--abundance-annotation", "underscore"], "abundance 0 is out of range"),
    (">_3\nACGT\n", ["--abundance-annotation", "underscore"], "holds only an abundance"),
    (">a_2\nACGT\n>a_1\nACGA\n", ["--abundance-annotation", "underscore"], "share the id 'a'"),
]


@pytest.mark.parametrize("text,extra,message", BAD, ids=[m for _, _, m in BAD])
def test_bad_input_one_line_exit_2_nothing_written(work, text, extra, message):
    (work / "bad.fa").write_text(text)
    res = invoke("bad.fa", *extra, "-o", "out.txt", "--seeds", "s.fa", cwd=work)
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: bad.fa: "), res.stderr
    assert message in lines[0]
    assert sorted(p.name for p in work.iterdir()) == ["amp.fa", "bad.fa"]


def test_dereplication_hint_names_vsearch(work):
    (work / "bad.fa").write_text(">a;size=2\nACGT\n>b;size=1\nACGT\n")
    res = invoke("bad.fa", "-o", "out.txt", cwd=work)
    assert "vsearch --derep_fulllength" in res.stderr and "--sizeout" in res.stderr


def test_default_abundance_appends_the_annotation(work):
    (work / "plain.fa").write_text(">a\nACGT\n>b;size=3\nACGA\n")
    res = invoke("plain.fa", "--default-abundance", "1", "-o", "-", "--seeds", "s.fa", cwd=work)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == "b;size=3 a;size=1;\n"
    assert (work / "s.fa").read_text() == ">b;size=4;\nACGA\n"


def test_underscore_annotation_as_swarm_writes_it(work):
    """swarm's default: ``id_N`` in, ids without ``_N`` in the statistics and assignments,
    seeds ``id_MASS``; the last ``_N`` is the annotation (``x_1_7``: id ``x_1``)."""
    (work / "u.fa").write_text(">x_1_7\nACGTACGT\n>b_3\nACGTACGA\n>c\nTTTTGGGG\n")
    res = invoke(
        "u.fa",
        "--abundance-annotation",
        "underscore",
        "--default-abundance",
        "2",
        "-o",
        "-",
        "--seeds",
        "s.fa",
        "--statistics-file",
        "s.tsv",
        "--assignments",
        "a.tsv",
        cwd=work,
    )
    assert res.exit_code == 0, res.stderr
    assert res.stdout == "x_1_7 b_3\nc_2\n"
    assert (work / "s.fa").read_text() == ">x_1_10\nACGTACGT\n>c_2\nTTTTGGGG\n"
    assert [ln.split("\t")[2] for ln in (work / "s.tsv").read_text().splitlines()] == ["x_1", "c"]
    assert (work / "a.tsv").read_text() == "id\tcluster\tseed\nx_1\t1\tx_1\nb\t1\tx_1\nc\t2\tc\n"


@pytest.mark.parametrize(
    "args,message",
    [
        (["-d", "0"], "out of range"),
        (["-d", "256"], "out of range"),
        (["--fastidious", "-d", "2"], "needs -d 1"),
        (["--boundary", "3"], "--fastidious only"),
        (["--method", "greedy", "-d", "2"], "does not apply"),
        (["--identity", "0.9"], "greedy only"),
        (["--identity-definition", "shorter"], "greedy only"),
        (
            ["--method", "greedy", "--identity-definition", "shorter", "-b", "reference"],
            "on the CPU",
        ),
        (["--method", "linkage", "--fastidious"], "swarm only"),
        (["--method", "greedy", "--differences", "swarm"], "does not apply"),
        (["--fastidious", "--boundary", "0"], "positive"),
        (["-z", "--abundance-annotation", "underscore"], "contradict each other"),
        (["-f", "-d", "3"], "needs -d 1"),
    ],
)
def test_usage_errors(work, args, message):
    res = invoke("amp.fa", "-o", "out.txt", *args, cwd=work)
    assert res.exit_code == 2 and message in res.stderr, res.stderr
    assert not (work / "out.txt").exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (["-o", "otus.fa"], "an OTU list is not written as .fa"),
        (["-o", "o.txt", "--seeds", "s.txt"], "a seed FASTA is not written as .txt"),
        (["-o", "-", "--assignments", "-"], "both name stdout"),
        (["-o", "amp.fa"], "not written as .fa"),
        (["-o", "nodir/o.txt"], "does not exist"),
    ],
)
def test_output_names_refused_before_work(work, args, message):
    res = invoke("amp.fa", *args, cwd=work)
    assert res.exit_code == 2 and message in res.stderr, res.stderr
    assert sorted(p.name for p in work.iterdir()) == ["amp.fa"]


def test_missing_input_file(work):
    res = invoke("nothere.fa", "-o", "o.txt", cwd=work)
    assert res.exit_code == 2 and "nothere.fa" in res.stderr


def test_ctrl_c_exits_130_with_nothing_written(work, monkeypatch):
    import bioaccel.clusters

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bioaccel.clusters, "cluster", interrupted)
    res = invoke("amp.fa", "-o", "otus.txt", "--seeds", "s.fa", cwd=work)
    assert res.exit_code == 130
    assert "interrupted; nothing written" in res.stderr
    assert sorted(p.name for p in work.iterdir()) == ["amp.fa"]


def test_edges_of_every_shard_give_the_searched_otus(tmp_path):
    """``bioaccel neighbors --shard k/N -o part.npz`` on each shard, then ``bioaccel cluster
    --edges`` on them: the bytes of the cluster that searches; a missing shard, a .tsv
    table and a table of a smaller d are refused in one line, exit 2, nothing written."""
    from tests.clusters.sim import simulate, write_fasta

    write_fasta(simulate(400, seed=9, parents=4, length=80, max_edits=4), tmp_path / "amp.fa")
    for k in (1, 2, 3):
        res = run_cli(
            "neighbors", tmp_path / "amp.fa", "-d", "2", "--shard", f"{k}/3", "-o",
            tmp_path / f"part{k}.npz",
        )  # fmt: skip
        assert res.exit_code == 0, res.output
    common = ["amp.fa", "-d", "2", "--differences", "swarm", "--statistics-file"]
    res = invoke(*common, "s1.tsv", "-o", "otus1.txt", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    parts = [x for k in (1, 2, 3) for x in ("--edges", f"part{k}.npz")]
    res = invoke(*common, "s2.tsv", "-o", "otus2.txt", *parts, cwd=tmp_path)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "otus1.txt").read_bytes() == (tmp_path / "otus2.txt").read_bytes()
    assert (tmp_path / "s1.tsv").read_bytes() == (tmp_path / "s2.tsv").read_bytes()
    run_cli("neighbors", tmp_path / "amp.fa", "-d", "2", "-o", tmp_path / "pairs.tsv")
    for extra, message in [
        (parts[:4], "shards [3] of 3 are missing"),
        (parts[:2], "holds shard 1/3 only: give the files of all 3 shards"),
        (["--edges", "pairs.tsv"], "--edges pairs.tsv: expected an .npz neighbour table"),
        (["-d", "3", *parts], "holds the pairs within 2 edits; max_distance=3 needs"),
    ]:
        res = invoke(*common, "s3.tsv", "-o", "otus3.txt", *extra, cwd=tmp_path)
        assert res.exit_code == 2, res.output
        assert message in res.output and len(res.output.strip().splitlines()) == 1
        assert not (tmp_path / "otus3.txt").exists() and not (tmp_path / "s3.tsv").exists()


def test_swarm_manual_output_names_and_python_writers_follow_one_rule(work):
    """Before: `-o myfile.swarms` (swarm's manual), `-s x.statistics` and `-u x.uclust` were
    refused, and the Python writers checked nothing: `write_seeds("amp.fa")` replaced the
    input amplicons. Now the CLI and the writers share one rule (OUTPUT_KINDS): swarm's names
    pass, another kind's extension and the input file are refused before anything is
    written."""
    import bioaccel
    from bioaccel.clusters import OUTPUT_KINDS

    res = invoke(
        *("amp.fa", "-o", "my.swarms", "-w", "my.representatives.fasta"),
        *("-s", "my.statistics", "-u", "my.uclust"),
        cwd=work,
    )
    assert res.exit_code == 0, res.output
    for name in ("my.swarms", "my.representatives.fasta", "my.statistics", "my.uclust"):
        assert (work / name).stat().st_size > 0
    c = bioaccel.cluster(str(work / "amp.fa"))
    before = (work / "amp.fa").read_bytes()
    for kind, write in (
        ("otus", c.write_otus),
        ("seeds", c.write_seeds),
        ("statistics", c.write_statistics),
        ("uclust", c.write_uclust),
        ("assignments", c.write_assignments),
    ):
        with pytest.raises(OSError, match="is the input"):
            write(work / "amp.fa")
        with pytest.raises(ValueError, match=f"{OUTPUT_KINDS[kind][1]} is not written as .weird"):
            write(work / "x.weird")
        for ext in OUTPUT_KINDS[kind][0]:
            write(work / f"out{ext}")
            res = invoke(
                "amp.fa",
                "--"
                + (
                    "output"
                    if kind == "otus"
                    else kind.replace("statistics", "statistics-file").replace(
                        "uclust", "uclust-file"
                    )
                ),
                f"cli{ext}",
                *(("-o", "o.txt") if kind != "otus" else ()),
                cwd=work,
            )
            assert res.exit_code == 0, (kind, ext, res.output)
    assert (work / "amp.fa").read_bytes() == before
    assert not (work / "x.weird").exists()


def test_header_bytes_that_are_not_utf8_are_written_back_as_read(work):
    """Before: a Latin-1 header ('caf\\xe9') came out as 'caf\\xef\\xbf\\xbd' (U+FFFD) in every
    output, where swarm writes its headers byte for byte. Now they are written back as read,
    to files and to stdout."""
    (work / "latin.fa").write_bytes(b">caf\xe9;size=3\nACGTACGT\n>b;size=1\nACGTACGA\n")
    res = invoke("latin.fa", "-o", "o.txt", "-w", "s.fa", "--assignments", "a.tsv", cwd=work)
    assert res.exit_code == 0, res.output
    assert (work / "o.txt").read_bytes() == b"caf\xe9;size=3 b;size=1\n"
    assert (work / "s.fa").read_bytes() == b">caf\xe9;size=4;\nACGTACGT\n"
    assert (
        work / "a.tsv"
    ).read_bytes() == b"id\tcluster\tseed\ncaf\xe9\t1\tcaf\xe9\nb\t1\tcaf\xe9\n"
    assert "1 OTU (swarm" in res.output


def test_cr_only_line_endings_are_named(work):
    """Before: a file with classic Mac OS line endings (CR alone) read as one line and was
    refused as 'empty sequence'. Now the line endings are named, plain and gzip alike; CRLF
    still reads."""
    import gzip

    (work / "cr.fa").write_bytes(b">a;size=3\rACGTACGT\r>b;size=1\rACGTACGA\r")
    (work / "cr.fa.gz").write_bytes(gzip.compress((work / "cr.fa").read_bytes()))
    for name in ("cr.fa", "cr.fa.gz"):
        res = invoke(name, "-o", "o.txt", cwd=work)
        assert res.exit_code == 2 and "lines end in CR only" in res.output
        assert not (work / "o.txt").exists()
    (work / "crlf.fa").write_bytes(b"\r\n>a;size=3\r\nACGTACGT\r\n>b;size=1\r\nACGTACGA\r\n")
    assert invoke("crlf.fa", "-o", "o.txt", cwd=work).exit_code == 0
    # however the text is cut into pieces (a first piece of one CR included)
    import bioaccel.clusters._amplicons as amplicons_module
    from bioaccel.clusters import read_amplicons

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(amplicons_module, "_PIECE", 1)
        assert len(read_amplicons(work / "crlf.fa")) == 2
        with pytest.raises(ValueError, match="lines end in CR only"):
            read_amplicons(work / "cr.fa")


def test_a_failing_output_leaves_no_output_behind(work, monkeypatch):
    # the outputs are written into their temporary files as they are rendered (never held
    # whole in memory) and renamed only when every one is done
    from bioaccel.clusters import Clustering

    def half_then_fail(self, out):
        out.write("1\t2\t")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Clustering, "write_statistics", half_then_fail)
    res = invoke(
        "amp.fa", "-o", "otus.txt", "--seeds", "s.fa", "--statistics-file", "s.tsv", cwd=work
    )
    assert res.exit_code != 0
    assert sorted(p.name for p in work.iterdir()) == ["amp.fa"]
