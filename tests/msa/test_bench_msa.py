"""The MSA benchmark driver (benchmarks/bench_msa.py) end to end on a tiny set: BAliBASE cases
scored by the shared scorer, a simulated family scored against its truth, a JSON report."""

from __future__ import annotations

import json

from benchmarks import bench_msa
from benchmarks.msa_accuracy import shared_msa_dir
from tests.datasets import unavailable


def test_tiny_run_reports_scores_time_and_memory(tmp_path, capsys):
    shared = shared_msa_dir()
    if shared is None:
        unavailable("../shared/msa not found (set BIOACCEL_SHARED_MSA)")
    out = tmp_path / "r.json"
    bench_msa.main(
        [
            "--balibase",
            str(shared / "balibase-rv11-rv12"),
            "--cases",
            "2",
            "--bali-tools",
            "bioaccel",
            "--sizes",
            "40",
            "--family-tools",
            "bioaccel",
            "--threads",
            "1",
            "--json",
            str(out),
        ]
    )
    report = json.loads(out.read_text())
    bali = report["balibase"]["bioaccel"]
    assert bali["all"]["cases"] == 2 and not bali["failed"] and 0 < bali["all"]["sp"] <= 1
    (run,) = report["families"][0]["runs"]
    assert run["tool"] == "bioaccel" and run["threads"] == 1 and "error" not in run
    assert 0.5 < run["sp"] <= 1 and 0 <= run["tc"] <= 1 and run["seconds"] > 0
    assert run["rss_mib"] > 10 and run["base_rss_mib"] > 10
    assert "bioaccel" in capsys.readouterr().out


def test_missing_tools_say_why(monkeypatch):
    import bioaccel

    monkeypatch.delattr(bioaccel, "msa", raising=False)  # loaded already, or loaded lazily:
    monkeypatch.delitem(bioaccel._LAZY, "msa")  # an installation without it
    assert "bioaccel.msa" in bench_msa.why_missing("bioaccel")
    monkeypatch.setattr(bench_msa.shutil, "which", lambda name: None)
    assert "apt-get install -y mafft" in bench_msa.why_missing("mafft")


def test_dna_speed_and_add_sections_on_tiny_inputs(tmp_path, monkeypatch, capsys):
    """(e) and (f) end to end on tiny inputs, bioaccel alone in (e): the rows and ratios exist,
    and the added residues of simulated genomes land in their true columns."""
    import argparse

    from benchmarks import bench_msa_add

    monkeypatch.setattr(bench_msa, "DNA_SPEED_FAMILIES", (("NA-like", 12, 300, 0.15, 0.001, 11),))
    args = argparse.Namespace(long_genomes="3x1500", threads=1, repeat=1, backend=None, timeout=600)
    rows = bench_msa.dna_speed(args, ["bioaccel"], tmp_path)
    assert [r["label"] for r in rows] == ["NA-like", "genomes"]
    for r in rows:
        (run,) = r["runs"]
        assert "error" not in run and run["sp"] > 0.9
    report = bench_msa_add.main(
        [
            "--genomes",
            "2",
            "--length",
            "1500",
            "--fragments",
            "3",
            "--repeats",
            "1",
            "--threads",
            "1",
            "--no-clustalo",
        ]
    )
    for label in ("genomes --keep-length", "fragments --keep-length"):
        b = report[label]["bioaccel"]
        assert b["right"] >= 0.99 * b["total"] > 0
    assert "placed right" in capsys.readouterr().out
