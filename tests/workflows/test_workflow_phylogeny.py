"""The phylogeny workflow (workflows/phylogeny) run for real on its .test families with 4
virtual GPUs: alignments, trees, the report, GPU leases, the order families start in, and
bad input."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bioaccel import read_newick
from bioaccel.distances._matrix import DistanceMatrix
from bioaccel.msa_engine import read_alignment
from bioaccel.sequences._read import read_sequences
from bioaccel.trees._tree import nj
from tests import workflow_helpers
from tests.datasets import child_env, unavailable
from tests.workflow_helpers import PHYLOGENY_FILES as FILES
from tests.workflow_helpers import png_pixels, run

pytestmark = [pytest.mark.workflow, pytest.mark.r, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "workflows" / "phylogeny"
FAMILIES = {"big": 48, "mid": 20, "small": 7, "made": 16, "single": 1}
#: small.fa ends with a record without residues: aligned as an all-gap row, left out of the
#: distances and trees, and said so in the summary
EMPTY = {"small": ["small_empty"]}


def copy_workflow(dest: Path) -> Path:
    return workflow_helpers.copy_workflow(WORKFLOW, dest)


@pytest.fixture(scope="session")
def test_run(tmp_path_factory, snakemake_exe, r_library):
    """The .test run with the local profile: the bioaccel scheduler, largest families first."""
    if shutil.which("fasttree") is None and shutil.which("FastTree") is None:
        unavailable("FastTree is not installed (apt-get install fasttree)")
    wd = copy_workflow(tmp_path_factory.mktemp("phylo"))
    lint = subprocess.run(
        [snakemake_exe, "--lint", "--configfile", ".test/config/config.yaml"],
        cwd=wd,
        capture_output=True,
        text=True,
        env=child_env(),
    )
    proc = run(
        snakemake_exe,
        wd,
        r_library,
        "--profile",
        "profiles/local",
        "--configfile",
        ".test/config/config.yaml",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return wd, lint, proc


def test_lint_is_clean(test_run):
    _, lint, _ = test_run
    assert lint.returncode == 0, lint.stdout[-2000:] + lint.stderr[-2000:]
    assert "Congratulations" in lint.stdout + lint.stderr


def test_alignments_hold_the_input_and_trees_name_every_sequence_once(test_run):
    wd, _, proc = test_run
    for family, n in FAMILIES.items():
        source = read_sequences(wd / ".test/data" / FILES[family])
        aln = read_alignment(wd / f"results/msa/{family}.fa")
        assert aln.ids == list(source.ids) and len(aln) == n
        assert [row.replace("-", "") for row in aln.sequences] == [
            source.sequence(i) for i in range(len(source))
        ], family
        for kind in ("tree", "ml_tree"):
            path = wd / f"results/{kind}/{family}.nwk"
            if n < 2 or (kind == "ml_tree" and n < 3):
                assert not path.exists()
                continue
            tree = read_newick(path)
            tips = [i for i in aln.ids if i not in EMPTY.get(family, [])]
            assert sorted(tree.labels) == sorted(tips), (family, kind)  # each id once
    # the NJ tree is bioaccel's NJ on the distances of the alignment
    aln = read_alignment(wd / "results/msa/big.fa")
    dm = DistanceMatrix.read(wd / "results/distances/big.cdist")
    np.testing.assert_allclose(dm.data, aln.distance_matrix("kimura").data, atol=1e-6)
    assert (wd / "results/tree/big.nwk").read_text().strip() == nj(
        dm, clamp_negative=True
    ).to_newick()
    # the README.txt in the folder is skipped, and said so
    assert "skipping 1 file(s) of .test/data that are not FASTA" in proc.stderr
    assert "README.txt" in proc.stderr


def test_summary_records_each_family_and_the_one_without_a_tree(test_run):
    wd, _, _ = test_run
    lines = (wd / "results/summary/summary.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    assert head == [
        "family",
        "sequences",
        "columns",
        "gap_fraction",
        "alignment_seconds",
        "gpu",
        "tree",
    ]
    rows = {r["family"]: r for r in (dict(zip(head, ln.split("\t"))) for ln in lines[1:])}
    assert set(rows) == set(FAMILIES)
    for family, row in rows.items():
        aln = read_alignment(wd / f"results/msa/{family}.fa")
        assert int(row["sequences"]) == FAMILIES[family] and int(row["columns"]) == aln.width
        gaps = sum(r.count("-") for r in aln.sequences) / (len(aln) * aln.width)
        assert float(row["gap_fraction"]) == pytest.approx(gaps, abs=1e-4)
        assert row["gpu"] in {"0", "1", "2", "3"} and float(row["alignment_seconds"]) > 0
    assert rows["single"]["tree"] == "none: 1 sequence"
    assert rows["small"]["tree"] == "nj (1 empty left out)"
    assert all(rows[f]["tree"] == "nj" for f in FAMILIES if f not in ("single", "small"))
    assert (
        "left out 1 row(s) without a residue: small_empty"
        in (wd / "logs/distances/small.log").read_text()
    )


def lease_spans(wd):
    """(family, gpu, start, end) of every msa job: the job's own record, checked against the
    lease line `bioaccel gpu-run` wrote to its log."""
    spans = []
    for family in FAMILIES:
        stats = json.loads((wd / f"results/msa/{family}.json").read_text())
        log = (wd / f"logs/msa/{family}.log").read_text()
        leased = re.search(r"GPU\(s\) (\S+) \(.*\) leased at", log)
        assert leased and "released at" in log, f"{family}: no lease record:\n{log}"
        assert leased.group(1) == stats["gpu"], (family, log, stats)
        spans.append((family, stats["gpu"], stats["start"], stats["end"]))
    return spans


def test_no_two_alignments_shared_a_gpu_and_the_largest_started_first(test_run):
    wd, _, proc = test_run
    spans = lease_spans(wd)
    for a in range(len(spans)):
        for b in range(a + 1, len(spans)):
            f1, g1, s1, e1 = spans[a]
            f2, g2, s2, e2 = spans[b]
            assert not (s1 < e2 and s2 < e1 and g1 == g2), (spans[a], spans[b])
    assert len({g for _, g, _, _ in spans}) >= 2  # two cores: at least two GPUs in use
    assert "bioaccel scheduler: policy largest" in proc.stderr
    assert "falling back" not in proc.stderr
    # two cores: the two families of most cells (sequences x length) start first
    start = {f: s for f, _, s, _ in spans}
    first_two = {"big", "mid"}
    assert max(start[f] for f in first_two) <= min(start[f] for f in FAMILIES if f not in first_two)
    # every alignment is in the run history with its cost, for the next run's predictions
    from bioaccel.sched.history import History

    runs = History(wd / "run").runs("msa")
    assert len(runs) == len(FAMILIES) and all(r.exit_code == 0 for r in runs)
    for family in FAMILIES:
        source = read_sequences(wd / ".test/data" / FILES[family])
        cells = round(sum(len(source.sequence(i)) for i in range(len(source))))
        (run,) = [r for r in runs if f"results/msa/{family}.json" in r.command]
        assert run.cells == cells, family


def bipartitions(tree, names):
    """The non-trivial splits of an (unrooted) tree, each as the side without names[0]."""
    tips_below = {}
    n = tree.n_tips

    def below(node):
        if node < n:
            return frozenset([tree.labels[node]])
        if node not in tips_below:
            tips_below[node] = frozenset().union(
                *(below(int(tree.child[e])) for e in tree._children[node])
            )
        return tips_below[node]

    everyone = frozenset(names)
    splits = set()
    for node in range(n, tree.n_nodes):
        side = below(node)
        if 1 < len(side) < len(everyone) - 1:
            splits.add(side if names[0] not in side else everyone - side)
    return splits


def test_nj_tree_is_close_to_the_true_tree(test_run):
    """big.fa was simulated down a known tree (benchmarks/family_sim.py, seed 1): the NJ tree
    from bioaccel's alignment recovers most of its splits. Robinson-Foulds distance by hand,
    checked against ape::dist.topo when R is there."""
    wd, _, _ = test_run
    truth = read_newick(wd / ".test/truth/big.nwk")
    ours = read_newick(wd / "results/tree/big.nwk")
    names = sorted(truth.labels)
    a, b = bipartitions(truth, names), bipartitions(ours, names)
    rf = len(a ^ b)
    max_rf = 2 * (len(names) - 3)
    print(f"Robinson-Foulds(NJ, truth) = {rf} of at most {max_rf} (normalised {rf / max_rf:.3f})")
    assert rf / max_rf <= 0.15  # measured: 8 of 90
    ml = read_newick(wd / "results/ml_tree/big.nwk")
    rf_ml = len(a ^ bipartitions(ml, names))
    print(f"Robinson-Foulds(FastTree, truth) = {rf_ml}")
    assert rf_ml / max_rf <= 0.15  # measured: 2 of 90
    from tests.rhelpers import r

    ro = r()
    dist_topo = ro.r(
        "function(a, b) ape::dist.topo(ape::unroot(ape::read.tree(a)), "
        "ape::unroot(ape::read.tree(b)))"
    )
    assert (
        int(dist_topo(str(wd / ".test/truth/big.nwk"), str(wd / "results/tree/big.nwk"))[0]) == rf
    )


def test_report_images_and_html_report(test_run, snakemake_exe, r_library):
    wd, _, _ = test_run
    report = wd / "results/report"
    for family in FAMILIES:
        w, h = png_pixels(report / f"trees/{family}.png")
        assert w >= 600 and h >= 600
    for name in ("summary", "heatmap"):
        png_pixels(report / f"{name}.png")
    pdf = (report / "trees.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == len(FAMILIES)  # a page per family
    table = (report / "summary.tsv").read_text().splitlines()
    assert table[0].endswith("\tparsimony")
    single = next(r for r in table if r.startswith("single\t"))
    assert single.endswith("\tNA")  # no tree, no parsimony score
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


def test_trimmed_on_the_cpu_without_any_gpu(tmp_path, snakemake_exe, r_library):
    """A family sheet, gap-fraction trimming, no GPU at all, no report."""
    wd = copy_workflow(tmp_path)
    (wd / "families.tsv").write_text(
        "family\tpath\nmid\t.test/data/mid.fasta\nmade\t.test/data/made.fa\n"
    )
    (wd / "cpu.yaml").write_text(
        "families: families.tsv\ntrim: {enabled: true, "
        "max_gap_fraction: 0.2}\nml_tree: {enabled: false}\n"
        "distance: {protein_model: kimura, dna_model: jc69}\n"
        "report: {enabled: false, heatmap_family: null}\n"
    )
    proc = run(snakemake_exe, wd, r_library, "--configfile", "cpu.yaml", gpus="")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for family in ("mid", "made"):
        assert "no GPU is visible" in (wd / f"logs/msa/{family}.log").read_text()
        assert json.loads((wd / f"results/msa/{family}.json").read_text())["gpu"] == "cpu"
        full = read_alignment(wd / f"results/msa/{family}.fa")
        trimmed = read_alignment(wd / f"results/trim/{family}.fa")
        keep = [
            c
            for c in range(full.width)
            if sum(r[c] == "-" for r in full.sequences) <= 0.2 * len(full)
        ]
        assert trimmed.sequences == ["".join(r[c] for c in keep) for r in full.sequences]
        assert trimmed.width < full.width
        dm = DistanceMatrix.read(wd / f"results/distances/{family}.cdist")
        model = "kimura" if family == "mid" else "jc69"
        np.testing.assert_allclose(dm.data, trimmed.distance_matrix(model).data, atol=1e-6)


def write_config(wd, families):
    (wd / "bad.yaml").write_text(f"families: {families}\nreport: {{heatmap_family: null}}\n")


@pytest.mark.parametrize(
    "files, message",
    [
        (
            {"a.fa": ">x\nMKV\n>y\nMKL\n", "a.fasta": ">z\nMKV\n>w\nMKL\n"},
            "family 'a' twice: a.fa and a.fasta; family names must be unique",
        ),
        (
            {"a.fa": ">x\nMKV\n>y\nMKL\n", "empty.fa": ""},
            "family 'empty': bad/empty.fa is empty: no sequences",
        ),
        (
            {"a.fa": ">x\nMKV\n>y\nMKL\n", "table.fa": "id\tvalue\nx\t1\n"},
            "family 'table': bad/table.fa: line 1 is 'id\\tvalue'; expected FASTA",
        ),
        ({"notes.txt": "hello\n"}, "no families in bad"),
    ],
)
def test_bad_family_folders_stop_with_the_family_named(
    tmp_path, snakemake_exe, r_library, files, message
):
    wd = copy_workflow(tmp_path)
    (wd / "bad").mkdir()
    for name, text in files.items():
        (wd / "bad" / name).write_text(text)
    write_config(wd, "bad")
    proc = run(snakemake_exe, wd, r_library, "--configfile", "bad.yaml", "-n")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert message in out, out[-2000:]


def test_bad_family_sheet(tmp_path, snakemake_exe, r_library):
    wd = copy_workflow(tmp_path)
    (wd / "sheet.tsv").write_text(
        "family\tpath\nx\t.test/data/small.fa\nx\t.test/data/big.fa\n"
        "y z\t.test/data/mid.fasta\nw\tnowhere.fa\n"
    )
    write_config(wd, "sheet.tsv")
    proc = run(snakemake_exe, wd, r_library, "--configfile", "bad.yaml", "-n")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for message in (
        "family 'x' twice: line 2 and line 3",
        "line 4: family name 'y z'",
        "line 5: family 'w': file 'nowhere.fa' does not exist",
    ):
        assert message in out, out[-2000:]


def test_iqtree_ml_trees(tmp_path, snakemake_exe, r_library):
    """ml_tree.program: iqtree (Debian iqtree, ModelFinder) instead of FastTree."""
    if shutil.which("iqtree2") is None and shutil.which("iqtree") is None:
        unavailable("IQ-TREE is not installed (apt-get install iqtree)")
    wd = copy_workflow(tmp_path)
    (wd / "families.tsv").write_text(
        "family\tpath\nsmall\t.test/data/small.fa\nmade\t.test/data/made.fa\n"
    )
    (wd / "iq.yaml").write_text(
        "families: families.tsv\nml_tree: {enabled: true, program: "
        "iqtree}\nreport: {enabled: false, heatmap_family: null}\n"
    )
    proc = run(
        snakemake_exe,
        wd,
        r_library,
        "results/ml_tree/small.nwk",
        "results/ml_tree/made.nwk",
        "--configfile",
        "iq.yaml",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for family in ("small", "made"):
        tree = read_newick(wd / f"results/ml_tree/{family}.nwk")
        ids = read_alignment(wd / f"results/msa/{family}.fa").ids
        assert sorted(tree.labels) == sorted(i for i in ids if i not in EMPTY.get(family, []))
