"""benchmarks/bench_phylogeny.py on a small set: bioaccel's order (largest predicted first)
against Snakemake's default order (largest input file first) and file-name order."""

import gzip

import pytest

from benchmarks import bench_phylogeny as bench


def test_family_files_and_their_sizes(tmp_path):
    fams = bench.make_families(tmp_path, count=6, seed=3, max_n=30, max_len=120)
    assert len({f.name for f in fams}) == 6
    for f in fams:
        raw = f.path.read_bytes()
        assert len(raw) == f.bytes
        text = (gzip.decompress(raw) if f.path.suffix == ".gz" else raw).decode()
        assert text.count(">") == f.n
    assert sum(f.path.suffix == ".gz" for f in fams) == 2  # every third file gzipped


def test_bioaccel_order_is_no_worse_than_snakemakes_default(tmp_path):
    """8 families on 4 GPUs, durations as predicted: at most two families per GPU, where
    longest-first is optimal (Graham 1969), so no order beats it; the default order, which
    ranks gzipped files by their compressed size, and file-name order can only tie or lose."""
    out = bench.main(
        [
            "--families",
            "8",
            "--seeds",
            "5",
            "--max-n",
            "40",
            "--max-len",
            "150",
            "--durations",
            "predicted",
            "--workdir",
            str(tmp_path),
        ]
    )
    sim = out[5]["simulated"]
    best = sim["bioaccel"]["makespan"]
    assert best > 0
    assert best <= sim["snakemake"]["makespan"] * (1 + 1e-9)
    assert best <= sim["fifo"]["makespan"] * (1 + 1e-9)
    # the family set is reproducible from its seed
    fams = bench.make_families(tmp_path / "again", count=8, seed=5, max_n=40, max_len=150)
    assert [f.cells for f in fams] == pytest.approx(
        [f.cells for f in bench.make_families(tmp_path / "third", 8, 5, 40, 150)]
    )


def test_simulated_order_matches_a_hand_schedule():
    fams = [
        bench.FamilyFile(n, None, 1, 1.0, b, s)
        for n, b, s in (("a", 10, 1.0), ("b", 30, 2.0), ("c", 20, 3.0))
    ]
    # one GPU, by bytes: b (ends 2), c (ends 5), a (ends 6)
    r = bench.simulate_order(sorted(fams, key=lambda f: -f.bytes), gpus=1)
    assert r["makespan"] == pytest.approx(6.0)
    assert r["avg_completion"] == pytest.approx((2.0 + 5.0 + 6.0) / 3)
    r2 = bench.simulate_order(fams, gpus=2)  # a, b start; c when a ends at 1 -> 4
    assert r2["makespan"] == pytest.approx(4.0)
