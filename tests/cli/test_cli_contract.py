"""The contract of every `bioaccel` command: help and version exit 0; usage errors exit 2
with click's message; bad input exits 2 with one line on stderr; internal failures exit 1
and say so (traceback with -v); stdout carries results only. The command tree is walked,
so a new command is covered (or must be added to COMMAND_CASES) automatically."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
import numpy as np
import pytest

import bioaccel
from bioaccel.cli._main import error_message, main
from tests.cli_runner import invoke
from tests.cli_runner import run_process as run
from tests.datasets import not_applicable


def leaf_commands(group: click.Group = main, path: tuple[str, ...] = ()):
    """Every command path below ``group``, groups included (("sched",), ("sched", "place"))."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # commands loaded on demand included
        cmd = group.get_command(ctx, name)
        yield path + (name,)
        if isinstance(cmd, click.Group):
            yield from leaf_commands(cmd, path + (name,))


ALL_COMMANDS = [()] + list(leaf_commands())


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("path", ALL_COMMANDS, ids=lambda p: " ".join(p) or "bioaccel")
def test_help_on_every_command_exits_0(path, flag):
    res = invoke(*path, flag)
    assert res.exit_code == 0, (res.exit_code, res.stderr)
    assert res.stdout.startswith("Usage:") and res.stderr == ""


def test_the_tree_walk_sees_every_command():
    want = {("distance",), ("tree",), ("sched", "simulate"), ("sched", "place")}
    assert want <= set(ALL_COMMANDS)


def test_help_and_version_of_the_real_process():
    res = run("distance", "--help")
    assert res.returncode == 0 and "Usage: bioaccel distance" in res.stdout and res.stderr == ""
    res = run("--version")
    assert res.returncode == 0 and res.stdout == f"bioaccel, version {bioaccel.__version__}\n"
    res = run("sched", "simulate", "-h")
    assert res.returncode == 0 and "--json" in res.stdout


# -- exit codes and streams on every command ----------------------------------------------------
@pytest.fixture
def work(tmp_path):
    """Inputs for every command, in one directory."""
    from bioaccel.distances._tiles import distance_tile, tile_bounds, write_tile

    (tmp_path / "aln.fa").write_text(
        ">a\nACGTACGTAC\n>b\nACGTACGTAT\n>c\nACGAACGTAC\n>d\nTCGAACGTTC\n"
    )
    (tmp_path / "bad.fa").write_text(">a\nACGT\n>b\nAC!T\n")
    (tmp_path / "amp.fa").write_text(">a;size=3\nACGTACGTAC\n>b;size=1\nACGTACGTAT\n")
    (tmp_path / "badamp.fa").write_text(">a;size=3\nACGT\n>b;size=1\nAC!T\n")
    (tmp_path / "empty.fa").write_text("")
    (tmp_path / "prot.fa").write_text(">p1\nMKVLEAGHW\n>p2\nMKILDAGW\n>p3\nWWPPMKV\n")
    batch = bioaccel.read_sequences(tmp_path / "aln.fa")
    bounds = tile_bounds(batch, 0, 0, 1)
    values, params = distance_tile(batch, "k80", bounds[:2], bounds[2:])
    write_tile(tmp_path / "t00.npz", values, bounds, len(batch), batch.ids, params)
    (tmp_path / "stages.csv").write_text("name,work,bytes,data\ns1,3,0,\ns2,2,0,\ns3,2,0,\n")
    (tmp_path / "nostages.csv").write_text("name,work,bytes,data\n")
    (tmp_path / "bench.tsv").write_text("s\th:m:s\n1.5\t0:00:01.5\n")
    (tmp_path / "notbench.tsv").write_text("seconds\n1.5\n")
    return tmp_path


def _empty(out: str) -> bool:
    return out == ""


def _json(out: str) -> bool:
    json.loads(out)
    return True


# command: (success args, check of stdout), bad-input args (None: the command reads no
# input), usage-error args
COMMAND_CASES = {
    ("distance",): ((["aln.fa", "-o", "d.phy"], _empty), ["bad.fa", "-o", "d.phy"], ["aln.fa"]),
    ("merge-tiles",): ((["t00.npz", "-o", "m.phy"], _empty), ["aln.fa", "-o", "m.phy"], []),
    ("cluster",): (
        (["aln.fa", "--default-abundance", "1", "-o", "otus.txt"], _empty),
        ["aln.fa", "-o", "otus.txt"],  # no ;size= annotations
        ["aln.fa", "-o", "otus.txt", "-d", "0"],
    ),
    ("tree",): (
        (["aln.fa", "-o", "t.nwk"], _empty),
        ["empty.fa", "-o", "t.nwk"],
        ["aln.fa", "-o", "t.nwk", "--method", "parsimony"],
    ),
    ("sketch",): (
        (["aln.fa", "-k", "3", "-o", "s.npz"], _empty),
        ["bad.fa", "-o", "s.npz"],
        ["aln.fa", "-k", "0", "-o", "s.npz"],
    ),
    ("align",): (
        (["prot.fa", "-o", "a.npy"], _empty),
        ["prot.fa", "--matrix", "BLOSUM99", "-o", "a.npy"],
        ["prot.fa", "--mode", "fuzzy"],
    ),
    ("msa",): (
        (["prot.fa", "-o", "m.fa"], _empty),
        ["bad.fa", "-o", "m.fa"],
        ["prot.fa", "-o", "m.fa", "--format", "nexus-xml"],
    ),
    ("neighbors",): (
        (["aln.fa", "-d", "2", "-o", "n.tsv"], _empty),
        ["bad.fa", "-d", "1", "-o", "n.tsv"],
        ["aln.fa", "-o", "n.tsv", "-m", "hamming"],
    ),
    ("doctor",): (
        (["--no-r"], lambda out: "backend:reference" in out),
        ["--require", "warp-drive"],
        ["--bogus"],
    ),
    ("gpu-run",): (
        ([sys.executable, "-c", "print('child')"], lambda out: out == "child\n"),
        ["--gpus", "5", "--", "true"],
        ["--gpus", "0", "--", "true"],
    ),
    ("gpus",): ((["--json"], _json), None, ["--bogus"]),
    ("admin",): ((["--help"], lambda out: "init" in out), None, ["bogus"]),
    ("admin", "init"): (
        (["--state-dir", "st", "--socket-dir", "so", "--no-start"], _empty),
        ["--slots-per-gpu", "2000", "--state-dir", "st", "--socket-dir", "so", "--no-start"],
        ["--max-waiting", "0"],
    ),
    ("arbiterd",): ((["--help"], lambda out: "--foreground" in out), None, ["--bogus"]),
    ("sched",): ((["--help"], lambda out: "simulate" in out), None, ["bogus"]),
    ("sched", "simulate"): (
        (["-w", "flood", "-c", "2", "--json"], _json),
        ["-w", "heavy-tailed:abc", "-c", "2"],
        ["-c", "2"],
    ),
    ("sched", "place"): (
        (["-t", "2", "-s", "stages.csv"], lambda out: "lpt" in out),
        ["-t", "2", "-s", "nostages.csv"],
        ["-t", "2"],
    ),
    ("sched", "import-benchmark"): (
        (["bench.tsv", "--kind", "align"], _empty),
        ["notbench.tsv", "--kind", "align"],
        ["bench.tsv"],
    ),
}


def test_every_command_has_cases():
    assert set(COMMAND_CASES) == set(ALL_COMMANDS) - {()}


def _run_case(work, path, args):
    return run(
        *path, *args, cwd=work, BIOACCEL_VIRTUAL_GPUS="2", BIOACCEL_RUN_DIR=str(work / "run")
    )


@pytest.mark.parametrize("path", sorted(COMMAND_CASES), ids=" ".join)
def test_success_writes_only_results_to_stdout(work, path):
    (args, stdout_ok), _, _ = COMMAND_CASES[path]
    if path == ("gpu-run",):
        args = ["--", *args]
    res = _run_case(work, path, args)
    assert res.returncode == 0, res.stderr
    assert stdout_ok(res.stdout), res.stdout
    assert "Traceback" not in res.stderr and "error" not in res.stderr.lower()


@pytest.mark.parametrize("path", sorted(COMMAND_CASES), ids=" ".join)
def test_bad_input_is_one_line_on_stderr_exit_2(work, path):
    _, bad, _ = COMMAND_CASES[path]
    if bad is None:
        not_applicable("the command reads no input")
    before = sorted(p.name for p in work.iterdir())
    res = _run_case(work, path, bad)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: "), res.stderr
    assert "Traceback" not in res.stderr and "[Errno" not in res.stderr
    assert sorted(p.name for p in work.iterdir() if p.name != "run") == [
        n for n in before if n != "run"
    ]  # no output, no temporary file


@pytest.mark.parametrize("path", sorted(COMMAND_CASES), ids=" ".join)
def test_usage_error_is_one_line_exit_2(work, path):
    # once: click's four lines (Usage, Try, a blank, Error) are one line, as
    # every other error (R joined the four into one message)
    _, _, usage = COMMAND_CASES[path]
    res = _run_case(work, path, usage)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: "), res.stderr
    assert "Usage:" not in res.stderr and "Try " not in res.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["bogus"], "No such command 'bogus'."),
        (["--bogus"], "No such option '--bogus'"),
        (["tree", "--bogus"], "No such option '--bogus'"),
        (["distance"], "Missing argument 'INPUT'."),
        (["sched", "place", "--bogus"], "No such option '--bogus'"),
        (["msa", "-o", "m.fa", "--add", "prot.fa"], "--add and --to go together"),
        (["distance", "aln.fa", "--tiles", "x", "-o", "d.phy"], "'x' is not a valid"),
    ],
)
def test_click_errors_are_one_line_through_the_groups_hook(work, args, message):
    res = _run_case(work, (), args)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("bioaccel: error: ")
    assert message in res.stderr, res.stderr


@pytest.mark.parametrize("value", ["abc", "1.5", "four"])
def test_a_thread_count_that_is_not_a_number_says_so(work, value):
    # "-t abc" once said "out of range" for what is not a number
    res = invoke("tree", str(work / "aln.fa"), "-t", value, "-o", "t.nwk")
    assert res.exit_code == 2
    assert res.stderr == (
        f"bioaccel: error: Invalid value for '-t' / '--threads': {value!r} is not a number: "
        f"expected an integer from 0 (all cores) to {4 * os.cpu_count()} "
        f"(4 x {os.cpu_count()} CPUs)\n"
    )


# -- internal failures --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "exc, shown",
    [
        (RuntimeError("kernel state corrupted"), "RuntimeError: kernel state corrupted"),
        (MemoryError(), "out of memory"),
        (KeyError("x"), "KeyError: 'x'"),
    ],
)
def test_internal_errors_exit_1_and_say_so(tmp_path, monkeypatch, exc, shown):
    import bioaccel.distances

    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(bioaccel.distances, "distance_matrix", broken)
    src = tmp_path / "a.fa"
    src.write_text(">a\nACGT\n>b\nACGA\n")
    out = tmp_path / "d.phy"
    res = invoke("distance", str(src), "-o", str(out))
    assert res.exit_code == 1
    assert res.stderr == (
        f"bioaccel: internal error: {shown} (a bug in bioaccel: rerun as "
        "`bioaccel -v ...` for the traceback)\n"
    )
    assert res.stdout == "" and not out.exists()
    # -v before the command, or (as users type it) after it: the same
    for args in (("-v", "distance", str(src)), ("distance", str(src), "--verbose")):
        res = invoke(*args, "-o", str(out))
        assert res.exit_code == 1
        assert "Traceback (most recent call last)" in res.stderr and "in broken" in res.stderr
        assert res.stderr.splitlines()[-1].startswith(f"bioaccel: internal error: {shown}")


def test_expected_errors_of_the_runtime_family_stay_bad_input(tmp_path, monkeypatch):
    """BackendUnavailableError is a RuntimeError, but a BioaccelError: exit 2."""
    import bioaccel.distances

    def unavailable(*args, **kwargs):
        raise bioaccel.BackendUnavailableError("backend 'cupy' is unavailable: no GPU")

    monkeypatch.setattr(bioaccel.distances, "distance_matrix", unavailable)
    src = tmp_path / "a.fa"
    src.write_text(">a\nACGT\n>b\nACGA\n")
    res = invoke("distance", str(src), "-o", str(tmp_path / "d.phy"))
    assert res.exit_code == 2
    assert res.stderr == "bioaccel: error: backend 'cupy' is unavailable: no GPU\n"


def test_os_errors_read_without_errno_or_temporary_names():
    tmp = "/data/.d.phy.k2j4_x9a.tmp"
    assert (
        error_message(IsADirectoryError(21, "Is a directory", tmp, None, "/data/d.phy"))
        == "cannot write '/data/d.phy': is a directory"
    )
    assert (
        error_message(FileNotFoundError(2, "No such file or directory", "in.fa"))
        == "in.fa: no such file or directory"
    )
    assert (
        error_message(OSError(28, "cannot write 'x': No space left on device"))
        == "cannot write 'x': No space left on device"
    )
    assert error_message(ValueError("line one\n  line two")) == "line one line two"
    assert (
        error_message(bioaccel.LeaseTimeoutError("GPU lease not granted in 5 s"))
        == "GPU lease not granted in 5 s"
    )
    assert error_message(OSError("[Errno 5] Input/output error")) == "Input/output error"


def test_output_that_is_a_directory(tmp_path):
    (tmp_path / "a.fa").write_text(">a\nACGT\n>b\nACGA\n")
    (tmp_path / "out").mkdir()
    res = run("distance", "a.fa", "-o", "out", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr == (
        "bioaccel: error: cannot write 'out' (--output): it is a directory; expected a file name\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.fa", "out"]


# -- classic Mac (CR) and Windows (CR LF) line ends ---------------------------------------------
FASTA = ">a first\nACGTACGTAC\nGG\n>b\nACGTACGTACGA\n>c\nTCGTACGTACGA\n"


@pytest.mark.parametrize("eol", ["\r", "\r\n"], ids=["CR", "CRLF"])
def test_line_ends_read_like_lf(tmp_path, eol):
    lf = tmp_path / "lf.fa"
    lf.write_text(FASTA)
    other = tmp_path / "other.fa"
    other.write_bytes(FASTA.replace("\n", eol).encode())
    want = bioaccel.read_sequences(lf)
    got = bioaccel.read_sequences(other)
    assert got.ids == want.ids == ["a", "b", "c"]
    assert [got.sequence(i) for i in range(3)] == [want.sequence(i) for i in range(3)]
    fq = tmp_path / "r.fq"
    fq.write_bytes("@r1\rACGT\r+\rIIII\r@r2\rACGA\r+\rIIII\r".replace("\r", eol).encode())
    assert bioaccel.read_sequences(fq).ids == ["r1", "r2"]
    res = run("distance", other, "-m", "jc69", "-o", tmp_path / "d.tsv")
    assert res.returncode == 0, res.stderr
    assert bioaccel.DistanceMatrix.read(tmp_path / "d.tsv") == bioaccel.distance_matrix(lf, "jc69")


# -- sched simulate / place: data out -----------------------------------------------------------
def test_simulate_json_and_csv_equal_simresult_metrics(tmp_path):
    import csv

    from bioaccel.devices._topology import Topology
    from bioaccel.sched.policies import POLICIES
    from bioaccel.sched.simulator import heavy_tailed_workload, simulate

    out = tmp_path / "m.csv"
    res = invoke(
        "sched",
        "simulate",
        "-w",
        "heavy-tailed:40",
        "-c",
        "3",
        "-p",
        "all",
        "--seed",
        "3",
        "--json",
        "--csv",
        str(out),
    )
    assert res.exit_code == 0, res.stderr
    got = json.loads(res.stdout)
    jobs = heavy_tailed_workload(40, seed=3)
    assert [g["policy"] for g in got] == list(POLICIES)
    rows = list(csv.DictReader(out.open()))
    for g, row, pol in zip(got, rows, POLICIES):
        want = simulate(jobs, Topology.identical(3), pol, "first-free", seed=3).metrics()
        assert {k: g[k] for k in want} == want
        assert {k: float(row[k]) for k in want} == want
        assert (g["placement"], g["jobs"], g["gpus"]) == ("first-free", 40, 3)
        assert row["policy"] == pol
    res = invoke("sched", "simulate", "-w", "flood", "-c", "2", "--json", "--csv", "-")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (
        "bioaccel: error: --json writes to stdout: give the other outputs file names\n"
    )
    res = invoke("sched", "simulate", "-w", "flood", "-c", "2", "--csv", "-")
    assert res.exit_code == 0 and res.stdout.splitlines()[0].startswith("policy,placement,jobs")


def test_simulate_table_is_not_cut_in_a_pipe():
    res = run("sched", "simulate", "-w", "flood", "-c", "2", "-p", "all")
    assert res.returncode == 0, res.stderr
    assert "…" not in res.stdout
    for word in ("priority", "predicted", "first-free", "makespan s", "GB moved"):
        assert word in res.stdout


def test_builtin_workloads_run_with_every_listed_placement():
    from bioaccel.devices._topology import Topology
    from bioaccel.sched.simulator import PLACEMENTS, flood_workload, heavy_tailed_workload, simulate

    jobs = heavy_tailed_workload(30, seed=2)
    assert any(j.num_gpu > 1 for j in jobs)
    for placement in PLACEMENTS:
        for workload in (jobs, flood_workload(flood_jobs=10)):
            r = simulate(
                workload, Topology.identical(4), "fcfs", placement, placement_budget_s=0.05
            )
            assert sorted(rec.job.id for rec in r.records) == sorted(j.id for j in workload)
            assert all(len(rec.gpus) == rec.job.num_gpu for rec in r.records)
            # no GPU runs two jobs at once
            for g in range(4):
                spans = sorted((rec.start, rec.end) for rec in r.records if g in rec.gpus)
                assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), placement
    res = invoke(
        "sched",
        "simulate",
        "-w",
        "heavy-tailed:30",
        "-c",
        "4",
        "-a",
        "ga",
        "--budget",
        "0.05",
        "--json",
    )
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)[0]["placement"] == "ga"


@pytest.fixture
def stages(tmp_path):
    p = tmp_path / "stages.csv"
    p.write_text("name,work,bytes,data\na,3,0,\nb,2,0,\nc,2,0,\nd,1,0,\ne,4,0,\n")
    return p


def test_place_shows_and_writes_the_assignment(tmp_path, stages):
    import csv

    from bioaccel.devices._topology import Topology
    from bioaccel.sched.placement import ALGORITHMS, Stage, processing_times

    res = invoke(
        "sched",
        "place",
        "-t",
        "2",
        "-s",
        str(stages),
        "--json",
        "--budget",
        "0.05",
        "--assignment",
        str(tmp_path / "a.csv"),
        "--csv",
        str(tmp_path / "t.csv"),
    )
    assert res.exit_code == 0, res.stderr
    got = json.loads(res.stdout)
    assert [g["algorithm"] for g in got] == list(ALGORITHMS)
    topo = Topology.identical(2)
    names = ["a", "b", "c", "d", "e"]
    p = processing_times([Stage(n, w) for n, w in zip(names, [3, 2, 2, 1, 4])], topo)
    for g in got:
        rows = g["assignment"]
        assert [r["stage"] for r in rows] == names
        keys = [gpu.key for gpu in topo.gpus]
        for j, r in enumerate(rows):
            assert r["end_s"] - r["start_s"] == pytest.approx(p[keys.index(r["gpu"]), j])
        for key in keys:  # one stage after another on each GPU, from 0
            spans = sorted((r["start_s"], r["end_s"]) for r in rows if r["gpu"] == key)
            assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
            assert not spans or spans[0][0] == 0
        assert max(r["end_s"] for r in rows) == pytest.approx(g["makespan_s"])
    written = list(csv.DictReader((tmp_path / "a.csv").open()))
    assert len(written) == len(ALGORITHMS) * len(names)
    assert written[0].keys() == {"algorithm", "stage", "gpu", "gpu_name", "start_s", "end_s"}
    table = list(csv.DictReader((tmp_path / "t.csv").open()))
    assert [float(t["makespan_s"]) for t in table] == [g["makespan_s"] for g in got]
    res = run("sched", "place", "-t", "2", "-s", stages, "-a", "lpt")
    assert res.returncode == 0 and "assignment of lpt" in res.stdout and "node1:1" in res.stdout


def test_place_refuses_empty_stages_and_broken_topology(tmp_path, stages):
    empty = tmp_path / "empty.csv"
    empty.write_text("name,work,bytes,data\n")
    res = run("sched", "place", "-t", "2", "-s", empty)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == (
        f"bioaccel: error: {empty}: no stages; expected a header "
        "name,work,bytes,data and one row per stage\n"
    )
    broken = tmp_path / "topo.yaml"
    broken.write_text("nodes:\n  - name: a\n    gpus: [\n")
    res = run("sched", "place", "-t", broken, "-s", stages)
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith(f"bioaccel: error: {broken}, line 4, column 1: not valid YAML")


def test_topology_schema_is_in_the_help():
    for cmd in (["sched", "place"], ["sched", "simulate"]):
        out = invoke(*cmd, "--help").stdout
        assert "Topology YAML" in out and "nvlink" in out and "compute_capability" in out


def test_readme_topology_example_loads():
    import yaml

    from bioaccel.devices._topology import parse_topology

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("A topology (YAML or JSON", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    topo = parse_topology(yaml.safe_load(block), "README")
    assert [g.key for g in topo.gpus] == ["node1:0", "node1:1"] and topo.links["nvlink"] == 400


def test_import_benchmark_reports_on_stderr(tmp_path, monkeypatch):
    bench = tmp_path / "b.tsv"
    bench.write_text("s\th:m:s\n2.0\t0:00:02\n")
    monkeypatch.setenv("BIOACCEL_RUN_DIR", str(tmp_path / "run"))
    res = invoke("sched", "import-benchmark", str(bench), "--kind", "align")
    assert res.exit_code == 0 and res.stdout == "" and "imported 1 run(s)" in res.stderr


# -- tree, outputs, stdin/stdout ----------------------------------------------------------------
@pytest.fixture
def aln(tmp_path):
    p = tmp_path / "aln.fa"
    p.write_text(
        ">a\nACGTACGTACGGTTAACC\n>b\nACGTACGTACGGTTAACA\n>c\nACGAACGTACGGTAAACC\n"
        ">d\nTCGAACGTTCGGTAAACC\n"
    )
    return p


def test_tree_of_a_sketch_file(tmp_path, aln):
    from bioaccel.distances._kmers import Sketches, sketch

    sk = tmp_path / "sk.npz"
    sketch(aln, k=5, size=50).save(sk)
    res = run("tree", sk, "-o", tmp_path / "t.nwk", "--matrix-output", tmp_path / "m.tsv")
    assert res.returncode == 0, res.stderr
    dm = bioaccel.distance_matrix(Sketches.load(sk), "mash")
    assert (tmp_path / "t.nwk").read_text() == bioaccel.nj(dm).to_newick() + "\n"
    assert bioaccel.DistanceMatrix.read(tmp_path / "m.tsv") == dm
    res = run("tree", sk, "-m", "k80", "-o", tmp_path / "t2.nwk")
    assert res.returncode == 2 and "a sketch file gives mash distances only" in res.stderr
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    res = run("tree", other, "-o", tmp_path / "t3.nwk")
    assert res.returncode == 2
    assert res.stderr == (
        f"bioaccel: error: {other}: not a distance matrix .npz (it holds "
        "['x'], not 'data' and 'ids')\n"
    )


def test_tree_checks_outputs_before_computing(tmp_path, aln):
    m = tmp_path / "m.phy"
    res = run("tree", aln, "-o", tmp_path / "missing" / "t.nwk", "--matrix-output", m)
    assert res.returncode == 2 and "directory" in res.stderr and "missing" in res.stderr
    assert not m.exists()
    res = run("tree", aln, "-o", m, "--matrix-output", m)
    assert res.returncode == 2
    assert "--output and --matrix-output both name the same file" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aln.fa"]


def test_dash_is_stdin_and_stdout(tmp_path, aln):
    text = aln.read_text()
    res = run("distance", "-", "-m", "jc69", "-o", "-", cwd=tmp_path, stdin=text)
    assert res.returncode == 0, res.stderr
    (tmp_path / "want.phy").unlink(missing_ok=True)
    bioaccel.distance_matrix(aln, "jc69").write(tmp_path / "want.phy")
    assert res.stdout == (tmp_path / "want.phy").read_text()
    assert "to stdout" in res.stderr
    res = run("tree", "-", "-o", "-", cwd=tmp_path, stdin=text)
    assert res.returncode == 0
    assert res.stdout == bioaccel.nj(bioaccel.distance_matrix(aln)).to_newick() + "\n"
    res = run("align", aln, "-o", "-", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.splitlines()[0] == "\ta\tb\tc\td"
    res = run("tree", "-", "-o", "t.nwk", cwd=tmp_path, stdin="2\na 0 1\nb 1 0\n")
    assert res.returncode == 2 and "a distance matrix is not read from stdin" in res.stderr
    res = run("distance", "-", "-o", "-", cwd=tmp_path, stdin=">a\nACGT\n>b\nAC!T\n")
    assert res.returncode == 2 and res.stderr.startswith("bioaccel: error: <stdin>")
    for args, message in [
        (["distance", aln, "-o", "-", "--format", "npy"], "-o -: npy is binary"),
        (["sketch", aln, "-o", "-"], "-o -: a sketch file is binary"),
        (["merge-tiles", "-", "-o", "m.phy"], "TILES -: tiles are binary"),
        (["tree", aln, "-o", "-", "--matrix-output", "-"], "both name stdout"),
    ]:
        res = run(*args, cwd=tmp_path)
        assert res.returncode == 2 and message in res.stderr, (args, res.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aln.fa", "want.phy"]  # no file '-'


@pytest.fixture
def proteins(tmp_path):
    p = tmp_path / "p.fa"
    p.write_text(">a\nMKVLEAGHW\n>b\nMKILDAGW\n>c\nWWPPMKV\n>d\nMKVLEF\n")
    return p


def test_align_npy_writes_the_ids(tmp_path, proteins):
    from bioaccel.pairwise._align import align_scores

    q = tmp_path / "q.fa"
    q.write_text(">x\nMKVLQF\n>y\nWWPAMKV\n")
    res = run("align", q, proteins, "-o", tmp_path / "s.npy")
    assert res.returncode == 0, res.stderr
    assert np.array_equal(np.load(tmp_path / "s.npy"), align_scores(q, proteins))
    assert (tmp_path / "s.npy.ids.txt").read_text() == "x\ny\n"
    assert (tmp_path / "s.npy.target_ids.txt").read_text() == "a\nb\nc\nd\n"
    res = run("align", proteins, "-o", tmp_path / "t.npy")
    assert res.returncode == 0 and (tmp_path / "t.npy.ids.txt").read_text() == "a\nb\nc\nd\n"
    assert not (tmp_path / "t.npy.target_ids.txt").exists()
    out = invoke("align", "--help").stdout
    assert "ids.txt" in out and "--devices" in out
    assert "ids.txt" in invoke("distance", "--help").stdout


def test_align_devices_spread_over_virtual_gpus(tmp_path, proteins):
    from bioaccel.pairwise._align import align_scores

    res = run(
        "align",
        proteins,
        "--devices",
        "all",
        "-o",
        tmp_path / "s.npy",
        BIOACCEL_VIRTUAL_GPUS="2",
        BIOACCEL_RUN_DIR=str(tmp_path / "run"),
    )
    assert res.returncode == 0, res.stderr
    assert np.array_equal(np.load(tmp_path / "s.npy"), align_scores(proteins))


def test_help_lists_every_model_and_the_sketch_options():
    import re

    with pytest.raises(bioaccel.ModelError) as err:  # the library's own list of models
        bioaccel.distance_matrix(["ACGT", "ACGA"], "no-such-model")
    models = re.findall(r"'([a-z0-9]+)'", str(err.value).split("expected one of", 1)[1])
    assert len(models) >= 12
    for cmd in ("distance", "tree"):
        out = " ".join(invoke(cmd, "--help").stdout.split())
        missing = [m for m in models if not re.search(rf"\b{m}\b", out)]
        assert not missing, (cmd, missing)
        for option in ("--kmer", "--sketch-size", "--seed"):
            assert option in out, (cmd, option)


def test_merge_tiles_on_a_non_tile_says_so(tmp_path, aln):
    np.save(tmp_path / "obj.npy", np.array([{}], dtype=object), allow_pickle=True)
    for bad in (aln, tmp_path / "obj.npy"):
        res = run("merge-tiles", bad, "-o", tmp_path / "m.phy")
        assert res.returncode == 2
        assert res.stderr == (
            f"bioaccel: error: {bad}: not a bioaccel distance tile; expected "
            "an .npz written by `bioaccel distance --tile A,B --tiles N`\n"
        )


def test_progress_bar_only_with_a_total(monkeypatch):
    import rich.progress

    from bioaccel._core.progress import progress_bar

    made = []

    class Recorder:
        def __init__(self, *columns, **kw):
            self.totals, self.started = [], False
            made.append(self)

        def start(self):
            self.started = True

        def stop(self):
            pass

        def add_task(self, description, total=None):
            self.totals.append(total)
            return 0

        def update(self, task, completed, total):
            self.totals.append(total)

    monkeypatch.setattr(rich.progress, "Progress", Recorder)
    with progress_bar("quiet", enabled=True):
        pass
    assert not made or not made[0].started
    made.clear()
    with progress_bar("counted", enabled=True) as update:
        update(5, 10)
        update(10, 10)
    assert made[0].started and None not in made[0].totals and made[0].totals[0] == 10


# -- bad input of every kind, on every command that reads files: exit 2, never 1 -------------
BAD_FILES = {
    "missing": None,
    "empty": b"",
    "blank": b"\n \n\t\n",
    "binary": bytes(range(256)) * 8,
    "npy": b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"
    + b" " * 50
    + b"\n"
    + b"\x00" * 16,
    "damaged-gzip": b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + b"garbage",
    "zip-not-ours": b"PK\x05\x06" + b"\x00" * 18,
    "text": b"hello world\nthis is not what you think\n",
    "nexus-standard": b"#NEXUS\nBEGIN DATA;\nDIMENSIONS NTAX=2 NCHAR=4;\nFORMAT DATATYPE=STANDARD;"
    b"\nMATRIX\na 0123\nb 0132\n;\nEND;\n",
    "matrix-diag": b"2\na 5 1\nb 1 0\n",
    "directory": "dir",
}

#: command -> arguments, with {bad} where the bad file goes
READING_COMMANDS = {
    "distance": ["distance", "{bad}", "-o", "out.phy"],
    "distance mash": ["distance", "{bad}", "-m", "mash", "-o", "out.phy"],
    "merge-tiles": ["merge-tiles", "{bad}", "-o", "out.phy"],
    "tree": ["tree", "{bad}", "-o", "out.nwk"],
    "sketch": ["sketch", "{bad}", "-o", "out.npz"],
    "align": ["align", "{bad}", "-o", "out.npy"],
    "align targets": ["align", "prot.fa", "{bad}", "-o", "out.npy"],
    "msa": ["msa", "{bad}", "-o", "out.fa"],
    "msa guide-tree": ["msa", "prot.fa", "--guide-tree", "{bad}", "-o", "out.fa"],
    "neighbors": ["neighbors", "{bad}", "-d", "1", "-o", "out.tsv"],
    "cluster": ["cluster", "{bad}", "-o", "out.txt"],
    "neighbors merge": ["neighbors", "--merge", "{bad}", "-o", "out.tsv"],
    "sched place": ["sched", "place", "-t", "2", "-s", "{bad}"],
    "sched place topology": ["sched", "place", "-t", "{bad}", "-s", "stages.csv"],
    "sched import-benchmark": ["sched", "import-benchmark", "{bad}", "--kind", "align"],
}


def test_the_bad_input_table_covers_every_command_that_reads_files():
    reading = {
        " ".join(p)
        for p in ALL_COMMANDS
        if p
        # admin init records the shares file's path; each user's arbiter reads and checks it
        and p[0] not in ("doctor", "gpus", "gpu-run", "admin", "arbiterd")
        and p not in (("sched",), ("sched", "simulate"))
    }
    assert reading <= {
        k.split(" ")[0] if k.split(" ")[0] != "sched" else " ".join(k.split(" ")[:2])
        for k in READING_COMMANDS
    }


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("command", sorted(READING_COMMANDS))
def test_bad_input_of_every_kind_exits_2_in_one_line(work, monkeypatch, command, kind):
    monkeypatch.chdir(work)
    monkeypatch.setenv("BIOACCEL_RUN_DIR", str(work / "run"))
    data = BAD_FILES[kind]
    bad = work / "bad.in"
    if data == "dir":
        bad.mkdir()
    elif data is not None:
        bad.write_bytes(data)
    before = sorted(p.name for p in work.iterdir() if p.name != "run")
    args = [str(bad) if a == "{bad}" else a for a in READING_COMMANDS[command]]
    res = invoke(*args)
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: "), res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    assert sorted(p.name for p in work.iterdir() if p.name != "run") == before


# -- every command x every kind of bad input: one line on stderr, exit 2, nothing written -----
#: the kinds of bad input a user gives any command
BAD_KINDS = ("missing file", "wrong alphabet", "bad number", "other extension", "output is input")
#: what the one line says of each kind: it names the culprit
BAD_KIND_SAYS = {
    "missing file": "missing.",
    "wrong alphabet": "invalid letter '!'",
    "bad number": "'abc'",
    "other extension": "is not written as",
    "output is input": "would destroy the input",
}

#: command -> kind -> arguments ({work} files; "same.EXT" is a hard link to an input), or
#: a string: why the kind cannot be given to that command
BAD_INPUTS = {
    ("distance",): {
        "missing file": ["missing.fa", "-o", "d.phy"],
        "wrong alphabet": ["bad.fa", "-o", "d.phy"],
        "bad number": ["aln.fa", "-k", "abc", "-m", "kmer", "-o", "d.phy"],
        "other extension": ["aln.fa", "-o", "d.csv"],
        "output is input": ["aln.fa", "-o", "same.phy"],
    },
    ("tree",): {
        "missing file": ["missing.fa", "-o", "t.nwk"],
        "wrong alphabet": ["bad.fa", "-o", "t.nwk"],
        "bad number": ["aln.fa", "-t", "abc", "-o", "t.nwk"],
        "other extension": ["aln.fa", "-o", "t.phy"],
        "output is input": ["aln.fa", "-o", "same.nwk"],
    },
    ("align",): {
        "missing file": ["missing.fa", "-o", "a.npy"],
        "wrong alphabet": ["bad.fa", "-o", "a.npy"],
        "bad number": ["prot.fa", "--gap-open", "abc", "-o", "a.npy"],
        "other extension": ["prot.fa", "-o", "a.phy"],
        "output is input": ["prot.fa", "-o", "same.tsv"],
    },
    ("sketch",): {
        "missing file": ["missing.fa", "-o", "s.npz"],
        "wrong alphabet": ["bad.fa", "-o", "s.npz"],
        "bad number": ["aln.fa", "-s", "abc", "-o", "s.npz"],
        "other extension": ["aln.fa", "-o", "s.npy"],
        "output is input": ["aln.fa", "-k", "3", "-o", "same.npz"],
    },
    ("msa",): {
        "missing file": ["missing.fa", "-o", "m.fa"],
        "wrong alphabet": ["bad.fa", "-o", "m.fa"],
        "bad number": ["prot.fa", "-t", "abc", "-o", "m.fa"],
        "other extension": ["prot.fa", "-o", "m.npy"],
        "output is input": ["prot.fa", "-o", "same.fa"],
    },
    ("merge-tiles",): {
        "missing file": ["missing.npz", "-o", "m.phy"],
        "wrong alphabet": "reads tiles of numbers, no letters",
        "bad number": "has no number option",
        "other extension": ["t00.npz", "-o", "m.csv"],
        "output is input": ["t00.npz", "-o", "same.npz"],
    },
    ("sched", "place"): {
        "missing file": ["-t", "2", "-s", "missing.csv"],
        "wrong alphabet": "reads a stage table, no letters",
        "bad number": ["-t", "2", "-s", "stages.csv", "--budget", "abc"],
        "other extension": "--csv and --assignment are CSV text under any name (- for stdout)",
        "output is input": ["-t", "2", "-s", "stages.csv", "--csv", "stages.csv"],
    },
    ("sched", "simulate"): {
        "missing file": ["-w", "missing.csv", "-c", "2"],
        "wrong alphabet": ["-w", "bad.fa", "-c", "2"],
        "bad number": ["-w", "flood", "-c", "2", "--budget", "abc"],
        "other extension": "--csv is CSV text under any name (- for stdout)",
        "output is input": ["-w", "stages.csv", "-c", "2", "--csv", "stages.csv"],
    },
    ("sched", "import-benchmark"): {
        "missing file": ["missing.tsv", "--kind", "align"],
        "wrong alphabet": "reads benchmark tables, no letters",
        "bad number": "has no number option",
        "other extension": "writes only the run history",
        "output is input": "writes only the run history",
    },
    ("admin", "init"): {
        "missing file": "records the shares file's path; each user's arbiter reads it",
        "wrong alphabet": "reads no sequences",
        "bad number": ["--slots-per-gpu", "abc"],
        "other extension": "writes only its run directory",
        "output is input": "writes only its run directory",
    },
    ("gpu-run",): {
        "missing file": "runs a command; a missing program is the child's exit 127, as a shell",
        "wrong alphabet": "reads no sequences",
        "bad number": ["--gpus", "abc", "--", "true"],
        "other extension": "writes no output",
        "output is input": "writes no output",
    },
    ("doctor",): {
        "missing file": "reads no file",
        "wrong alphabet": "reads no sequences",
        "bad number": "has no number option",
        "other extension": "writes no output",
        "output is input": "writes no output",
    },
    ("gpus",): {kind: "reads nothing, writes nothing (--json to stdout)" for kind in BAD_KINDS},
    ("arbiterd",): {
        kind: "the service reads its own root-only state and writes no named output"
        for kind in BAD_KINDS
    },
    ("neighbors",): {
        "missing file": ["missing.fa", "-d", "1", "-o", "p.tsv"],
        "wrong alphabet": ["bad.fa", "-d", "1", "-o", "p.tsv"],
        "bad number": ["aln.fa", "-d", "abc", "-o", "p.tsv"],
        "other extension": ["aln.fa", "-d", "1", "-o", "p.csv"],
        "output is input": ["aln.fa", "-d", "1", "-o", "same.tsv"],
    },
    ("cluster",): {
        "missing file": ["missing.fa", "-o", "o.txt"],
        "wrong alphabet": ["badamp.fa", "-o", "o.txt"],
        "bad number": ["amp.fa", "-t", "abc", "-o", "o.txt"],
        "other extension": ["amp.fa", "-o", "o.csv"],
        "output is input": ["amp.fa", "-o", "same.txt"],
    },
}


def test_the_bad_input_kinds_cover_every_command():
    commands = {p for p in ALL_COMMANDS if p} - {("sched",), ("admin",)}  # groups: usage only
    assert set(BAD_INPUTS) == commands
    assert all(set(kinds) == set(BAD_KINDS) for kinds in BAD_INPUTS.values())


@pytest.mark.parametrize(
    "path, kind",
    [
        (p, k)
        for p in sorted(BAD_INPUTS)
        for k in BAD_KINDS
        if not isinstance(BAD_INPUTS[p][k], str)
    ],
    ids=lambda x: " ".join(x) if isinstance(x, tuple) else x,
)
def test_every_command_and_kind_of_bad_input_is_one_line_exit_2(work, monkeypatch, path, kind):
    args = BAD_INPUTS[path][kind]
    monkeypatch.chdir(work)
    monkeypatch.setenv("BIOACCEL_RUN_DIR", str(work / "run"))
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "2")
    source = {("align",): "prot.fa", ("msa",): "prot.fa", ("cluster",): "amp.fa"}.get(
        path, "aln.fa"
    )
    for ext in ("phy", "nwk", "tsv", "npz", "fa", "txt"):
        os.link(work / ("t00.npz" if path == ("merge-tiles",) else source), work / f"same.{ext}")
    before = sorted(p.name for p in work.iterdir() if p.name != "run")
    res = invoke(*path, *args)
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: "), res.stderr
    assert "Usage:" not in res.stderr and "Traceback" not in res.stderr
    assert BAD_KIND_SAYS[kind] in res.stderr, res.stderr
    assert sorted(p.name for p in work.iterdir() if p.name != "run") == before


def test_ctrl_c_in_any_command_exits_130_in_one_line(tmp_path, monkeypatch):
    """Ctrl-C is handled once, by the group, for every command (not click's "Aborted!" and
    exit 1): one line, 130, no output."""
    import bioaccel.distances

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bioaccel.distances, "distance_matrix", interrupted)
    src = tmp_path / "a.fa"
    src.write_text(">a\nACGT\n>b\nACGA\n")
    out = tmp_path / "d.phy"
    res = invoke("distance", str(src), "-o", str(out))
    assert res.exit_code == 130, res.output
    assert res.stderr == "bioaccel: interrupted; nothing written\n"
    assert not out.exists()
