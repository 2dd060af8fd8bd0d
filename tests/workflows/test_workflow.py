"""The Snakemake workflow (workflows/distances) run for real on its .test data."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bioaccel.distances._compute import distance_matrix
from bioaccel.distances._matrix import DistanceMatrix
from bioaccel.sequences._read import read_sequences
from bioaccel.trees._tree import nj
from tests import workflow_helpers
from tests.datasets import child_env
from tests.workflow_helpers import png_pixels, run

pytestmark = [pytest.mark.workflow, pytest.mark.r, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "workflows" / "distances"


def copy_workflow(dest: Path) -> Path:
    return workflow_helpers.copy_workflow(WORKFLOW, dest)


@pytest.fixture(scope="session")
def test_run(tmp_path_factory, snakemake_exe, r_library):
    wd = copy_workflow(tmp_path_factory.mktemp("wf"))
    lint = subprocess.run(
        [snakemake_exe, "--lint", "--configfile", ".test/config/config.yaml"],
        cwd=wd,
        capture_output=True,
        text=True,
        env=child_env(),
    )
    proc = run(snakemake_exe, wd, r_library, "--configfile", ".test/config/config.yaml")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return wd, lint


def test_lint_is_clean(test_run):
    _, lint = test_run
    assert lint.returncode == 0, lint.stdout[-2000:] + lint.stderr[-2000:]
    assert "Congratulations" in lint.stdout + lint.stderr


def test_outputs_equal_the_direct_api(test_run):
    wd, _ = test_run
    pooled = read_sequences(wd / "results/pool/sequences.fasta")
    direct = distance_matrix(pooled, "edit", backend="cpu")
    merged = DistanceMatrix.read(wd / "results/merge/distances.cdist")
    assert merged.ids == direct.ids
    np.testing.assert_array_equal(merged.data, direct.data)
    assert DistanceMatrix.read(wd / "results/merge/distances.tsv") == direct
    tree = (wd / "results/tree/nj.nwk").read_text().strip()
    assert tree == nj(direct, clamp_negative=True).to_newick()
    # dereplication: every distinct read of a sample once, abundances add up to the reads
    for sample, path in (("sam1", ".test/data/sam1.fastq.gz"), ("sam2", ".test/data/sam2.fasta")):
        reads = read_sequences(wd / path)
        distinct = {reads.sequence(i) for i in range(len(reads))}
        derep = read_sequences(wd / f"results/dereplicate/{sample}.fasta")
        assert {derep.sequence(i) for i in range(len(derep))} == distinct
        sizes = [int(re.search(r";size=(\d+)$", i).group(1)) for i in derep.ids]
        assert sum(sizes) == len(reads) and sizes == sorted(sizes, reverse=True)
    qc = (wd / "results/qc_summary/qc.tsv").read_text().splitlines()
    head = qc[0].split("\t")
    row = dict(zip(head, qc[1].split("\t")))
    assert row["sample"] == "sam1" and int(row["sequences"]) == 300
    assert int(row["duplicates"]) == 300 - int(row["unique_sequences"])


def test_clusters_match_scipy_on_the_merged_matrix(test_run):
    from scipy.cluster.hierarchy import fcluster, linkage

    wd, _ = test_run
    dm = DistanceMatrix.read(wd / "results/merge/distances.cdist")
    lines = (wd / "results/clusters/clusters.tsv").read_text().splitlines()
    cols = lines[0].split("\t")
    got = np.array([[int(x) for x in ln.split("\t")[2:]] for ln in lines[1:]])
    for k, col in enumerate(cols[2:]):
        expected = fcluster(
            linkage(dm.condensed(), "average"), float(col.split("_")[1]), criterion="distance"
        )
        # same partition, whatever the numbering
        pairs = {(a, b) for a, b in zip(expected, got[:, k])}
        assert len(pairs) == len(set(expected)) == len(set(got[:, k]))


def _seconds(stamp: str) -> float:
    import datetime

    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").timestamp()


def test_tile_jobs_never_shared_a_gpu(test_run):
    wd, _ = test_run
    spans = []
    for log in sorted((wd / "logs/distance_tile").glob("*.log")):
        text = log.read_text()
        # gpu-run prints local times to the second ("2026-12-02 00:31:05"): a real overlap
        # of a second or more is caught, and back-to-back leases never look overlapping
        stamp = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"
        lease = re.search(r"GPU\(s\) (\S+) .*leased at " + stamp, text)
        release = re.search(r"released at " + stamp, text)
        assert lease and release, f"{log.name}: no lease record:\n{text}"
        spans.append((_seconds(lease.group(2)), _seconds(release.group(1)), lease.group(1)))
    assert len(spans) == 10  # 4 x 4 grid: 10 upper tiles
    for a in range(len(spans)):
        for b in range(a + 1, len(spans)):
            s1, e1, g1 = spans[a]
            s2, e2, g2 = spans[b]
            assert not (s1 < e2 and s2 < e1 and g1 == g2), (spans[a], spans[b])
    assert len({g for _, _, g in spans}) >= 2  # two cores: at least two GPUs in use


def test_report_images_exist_and_decode(test_run):
    wd, _ = test_run
    report = wd / "results/report"
    for name in ("heatmap", "tree", "pcoa"):
        w, h = png_pixels(report / f"{name}.png")
        assert w >= 600 and h >= 600
        pdf = (report / f"{name}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF") and len(pdf) > 5000
    table = (report / "cluster_table.tsv").read_text().splitlines()
    assert table[0].split("\t") == ["threshold", "cluster", "size", "sam1", "sam2"]
    n = len(DistanceMatrix.read(wd / "results/merge/distances.cdist"))
    for t in ("3", "10"):
        assert sum(int(r.split("\t")[2]) for r in table[1:] if r.split("\t")[0] == t) == n


def test_html_report(test_run, snakemake_exe, r_library):
    wd, _ = test_run
    proc = run(
        snakemake_exe,
        wd,
        r_library,
        "--configfile",
        ".test/config/config.yaml",
        "--report",
        "report.html",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (wd / "report.html").stat().st_size > 100_000


def write_sheet(wd: Path, rows: str) -> None:
    (wd / ".test/config/samples.tsv").write_text("sample\tpath\n" + rows)


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            "sam1\t.test/data/missing.fa\n",
            "sample 'sam1': file '.test/data/missing.fa' does not exist",
        ),
        ("sam1\t.test/data/sam2.fasta\nsam1\t.test/data/sam2.fasta\n", "sample 'sam1' repeated"),
        ("bad name\t.test/data/sam2.fasta\n", "sample 'bad name'"),
        ("", "no samples"),
        ("sam1\t\n", "sample 'sam1' has no path"),
    ],
)
def test_bad_sample_sheets_stop_with_the_sample_named(
    tmp_path, snakemake_exe, r_library, rows, message
):
    wd = copy_workflow(tmp_path)
    write_sheet(wd, rows)
    proc = run(snakemake_exe, wd, r_library, "--configfile", ".test/config/config.yaml", "-n")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr  # a dry run reports on stdout
    assert message in out, out[-2000:]


def test_empty_or_corrupt_input_fails_the_sample_and_leaves_no_output(
    tmp_path, snakemake_exe, r_library
):
    wd = copy_workflow(tmp_path)
    (wd / ".test/data/empty.fa").write_text("")
    (wd / ".test/data/bad.fa").write_text(">x\nACGT\n>y\nAC!T\n")
    write_sheet(
        wd, "good\t.test/data/sam2.fasta\nempty\t.test/data/empty.fa\nbad\t.test/data/bad.fa\n"
    )
    proc = run(
        snakemake_exe, wd, r_library, "--configfile", ".test/config/config.yaml", "--keep-going"
    )
    assert proc.returncode != 0
    assert "sample 'empty'" in proc.stderr and "empty" in proc.stderr
    assert "sample 'bad'" in proc.stderr and "'!'" in proc.stderr
    assert (wd / "results/validate/good.fasta").exists()
    for sample in ("empty", "bad"):
        assert not (wd / f"results/validate/{sample}.fasta").exists()
        assert not (wd / f"results/validate/{sample}.qc.tsv").exists()
    assert not (wd / "results/merge").exists()


def test_runs_on_the_cpu_without_any_gpu(tmp_path, snakemake_exe, r_library):
    wd = copy_workflow(tmp_path)
    write_sheet(wd, "sam2\t.test/data/sam2.fasta\n")
    cfg = (wd / ".test/config/config.yaml").read_text()
    (wd / ".test/config/cpu.yaml").write_text(
        cfg.replace("report:\n  enabled: true", "report:\n  enabled: false")
    )
    proc = run(snakemake_exe, wd, r_library, "--configfile", ".test/config/cpu.yaml", gpus="")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = (wd / "logs/distance_tile/0_0.log").read_text()
    assert "no GPU is visible" in log
    pooled = read_sequences(wd / "results/pool/sequences.fasta")
    assert DistanceMatrix.read(wd / "results/merge/distances.cdist") == distance_matrix(
        pooled, "edit"
    )


def test_local_profile_runs_with_the_bioaccel_scheduler(tmp_path, snakemake_exe, r_library):
    wd = copy_workflow(tmp_path)
    write_sheet(wd, "sam2\t.test/data/sam2.fasta\n")
    cfg = (wd / ".test/config/config.yaml").read_text()
    (wd / ".test/config/local.yaml").write_text(
        cfg.replace("report:\n  enabled: true", "report:\n  enabled: false")
    )
    proc = run(
        snakemake_exe,
        wd,
        r_library,
        "--profile",
        "profiles/local",
        "--configfile",
        ".test/config/local.yaml",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "bioaccel scheduler: policy predicted" in proc.stderr
    pooled = read_sequences(wd / "results/pool/sequences.fasta")
    assert DistanceMatrix.read(wd / "results/merge/distances.cdist") == distance_matrix(
        pooled, "edit"
    )
