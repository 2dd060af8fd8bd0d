"""The amplicon workflow (workflows/amplicons) run for real on its .test reads (three
samples of real MiSeq 16S V4 pairs with their primers): lint, the OTU table against Fred's
vsearch + swarm pipeline run with the command-line tools, counts against the read
tracking, the phyloseq object in R, one and ten samples, --cores 1 and 2, bad input, and
a Slurm profile dry run."""

from __future__ import annotations

import gzip
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import amplicon_oracle, workflow_helpers
from tests.datasets import child_env, unavailable
from tests.workflow_helpers import png_pixels

pytestmark = [pytest.mark.workflow, pytest.mark.r, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "workflows" / "amplicons"
TEST_SAMPLES = {
    s: (f".test/data/{s}_R1.fastq.gz", f".test/data/{s}_R2.fastq.gz")
    for s in ("sam1", "sam2", "sam3")
}
#: DADA2's example training set, named by .test/config/config.yaml (Debian r-bioc-dada2)
TRAIN_SET = Path("/usr/lib/R/site-library/dada2/extdata/example_train_set.fa.gz")
#: a config without the slow R steps, for the runs that check something else
QUICK = "taxonomy: {method: none}\nreport: {enabled: false}\nbiom: false\n"


def tools():
    for exe in ("vsearch", "swarm", "cutadapt"):
        if shutil.which(exe) is None:
            unavailable(f"{exe} is not installed (scripts/test.sh installs it)")
    # bioaccel cluster finds its pairs with bioaccel.neighbors
    if importlib.util.find_spec("bioaccel.neighbors") is None:
        unavailable("bioaccel.neighbors is not in this checkout (bioaccel cluster needs it)")


def copy_workflow(dest: Path) -> Path:
    return workflow_helpers.copy_workflow(WORKFLOW, dest)


def snakemake(exe, wd, *args, cores=2, timeout=600):
    return subprocess.run(
        [exe, "--cores", str(cores), *args],
        cwd=wd,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def read_table(path: Path) -> dict[str, dict[str, int]]:
    lines = path.read_text().splitlines()
    head = lines[0].split("\t")
    assert head[0] == "OTU"
    return {
        f[0]: {s: int(v) for s, v in zip(head[1:], f[1:])}
        for f in (ln.split("\t") for ln in lines[1:])
    }


def read_tsv(path: Path) -> dict[str, dict[str, str]]:
    lines = path.read_text().splitlines()
    head = lines[0].split("\t")
    return {f[0]: dict(zip(head[1:], f[1:])) for f in (ln.split("\t") for ln in lines[1:])}


def write_sheet(wd: Path, rows: dict[str, tuple[str, ...]], name="samples.tsv") -> str:
    text = "sample\tfq1\tfq2\n" + "".join(
        f"{s}\t{files[0]}\t{files[1] if len(files) > 1 else ''}\n" for s, files in rows.items()
    )
    (wd / ".test/config" / name).write_text(text)
    return f".test/config/{name}"


def write_config(wd: Path, sheet: str, extra: str = QUICK, name="quick.yaml") -> str:
    base = (wd / ".test/config/config.yaml").read_text()
    lines = [ln for ln in base.splitlines() if not ln.startswith("samples:")]
    (wd / ".test/config" / name).write_text(f"samples: {sheet}\n" + "\n".join(lines) + "\n" + extra)
    return f".test/config/{name}"


@pytest.fixture(scope="session")
def test_run(tmp_path_factory, snakemake_exe):
    tools()
    if not TRAIN_SET.exists() or shutil.which("Rscript") is None:
        unavailable(f"R with dada2 is needed ({TRAIN_SET}; apt-get install r-bioc-dada2)")
    wd = copy_workflow(tmp_path_factory.mktemp("amplicons"))
    lint = snakemake(snakemake_exe, wd, "--lint", "--configfile", ".test/config/config.yaml")
    proc = snakemake(snakemake_exe, wd, "--configfile", ".test/config/config.yaml")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return wd, lint


@pytest.fixture(scope="session")
def oracle(test_run, tmp_path_factory):
    wd, _ = test_run
    files = {s: tuple(str(wd / f) for f in fs) for s, fs in TEST_SAMPLES.items()}
    return amplicon_oracle.run(files, tmp_path_factory.mktemp("fred"))


def test_lint_is_clean(test_run):
    _, lint = test_run
    assert lint.returncode == 0, lint.stdout[-2000:] + lint.stderr[-2000:]
    assert "Congratulations" in lint.stdout + lint.stderr


def test_otu_table_equals_freds_vsearch_swarm_pipeline(test_run, oracle):
    wd, _ = test_run
    table, seeds, filtered = oracle
    ours = read_table(wd / "results/otu_table.tsv")
    assert len(ours) >= 10  # the three samples hold 15 OTUs
    assert ours == table
    # the representatives: one per OTU, the seed's sequence, same ids, table order
    lines = (wd / "results/otus.fasta").read_text().splitlines()
    fasta = {lines[i][1:]: lines[i + 1] for i in range(0, len(lines), 2)}
    assert list(fasta) == list(ours) and fasta == seeds
    tracking = read_tsv(wd / "results/read_tracking.tsv")
    assert {s: int(r["filtered"]) for s, r in tracking.items()} == filtered


def test_counts_add_up_to_the_read_tracking(test_run):
    wd, _ = test_run
    header = (wd / "results/read_tracking.tsv").read_text().splitlines()[0].split("\t")
    assert header == [
        "sample",
        "reads_in",
        "trimmed",
        "merged",
        "filtered",
        "uniques",
        "clustered",
        "nonchimeric",
    ]
    tracking = read_tsv(wd / "results/read_tracking.tsv")
    table = read_table(wd / "results/otu_table.tsv")
    for sample, row in tracking.items():
        n = {k: int(v) for k, v in row.items()}
        assert n["reads_in"] == 500  # pairs in each .test sample
        assert n["reads_in"] >= n["trimmed"] >= n["merged"] >= n["filtered"] > 0
        assert n["filtered"] == n["clustered"] >= n["nonchimeric"] > 0
        assert n["uniques"] <= n["filtered"]
        assert sum(r[sample] for r in table.values()) == n["nonchimeric"]
        # uniques: the sample's dereplicated amplicons, their sizes the filtered reads
        derep = amplicon_oracle.amplicons(wd / f"results/derep/{sample}.fasta")
        assert len(derep) == n["uniques"] and sum(derep.values()) == n["filtered"]
    # every primer was found (they were put in front of each read): trimming kept all
    assert all(int(r["trimmed"]) == 500 for r in tracking.values())
    # and removed: the trimmed reads are the original dada2 reads again
    original = "/usr/lib/R/site-library/dada2/extdata/sam1F.fastq.gz"
    if Path(original).exists():
        with gzip.open(original, "rt") as f:
            first = [ln.strip() for i, ln in enumerate(f) if i % 4 == 1 and i < 40]
        with gzip.open(wd / "results/trim/sam1_R1.fastq.gz", "rt") as f:
            trimmed = [ln.strip() for i, ln in enumerate(f) if i % 4 == 1 and i < 40]
        assert trimmed == first


def test_biom_and_taxonomy(test_run):
    wd, _ = test_run
    from biom import load_table

    table = read_table(wd / "results/otu_table.tsv")
    biom = load_table(str(wd / "results/otu_table.biom"))
    assert list(biom.ids(axis="observation")) == list(table)
    samples = list(biom.ids(axis="sample"))
    for otu, row in table.items():
        assert [int(biom.get_value_by_ids(otu, s)) for s in samples] == [row[s] for s in samples]
    taxonomy = read_tsv(wd / "results/taxonomy.tsv")
    assert list(taxonomy) == list(table)
    assert all(r["Kingdom"] == "Bacteria" for r in taxonomy.values())


def test_phyloseq_object_loads_in_r_with_the_tables_totals(test_run):
    wd, _ = test_run
    if shutil.which("Rscript") is None:
        unavailable("R is not installed")
    code = (
        "suppressPackageStartupMessages(library(phyloseq)); "
        "ps <- readRDS('results/phyloseq.rds'); m <- as(otu_table(ps), 'matrix'); "
        "cat(class(ps), taxa_are_rows(otu_table(ps)), ntaxa(ps), '\\n'); "
        "s <- colSums(m); cat(paste(names(s), s, sep='=', collapse=' '), '\\n'); "
        "cat(paste(rownames(m)[1:3], collapse=' '), '\\n'); "
        "cat(ncol(tax_table(ps)), length(refseq(ps)), "
        "sum(sample_data(ps)$nonchimeric), '\\n')"
    )
    proc = subprocess.run(
        ["Rscript", "-e", code], cwd=wd, capture_output=True, text=True, env=child_env()
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    first, sums, ids, parts = proc.stdout.splitlines()
    table = read_table(wd / "results/otu_table.tsv")
    assert first.split() == ["phyloseq", "TRUE", str(len(table))]
    totals = {s: sum(r[s] for r in table.values()) for s in ("sam1", "sam2", "sam3")}
    assert dict(kv.split("=") for kv in sums.split()) == {s: str(v) for s, v in totals.items()}
    assert ids.split() == list(table)[:3]
    assert parts.split() == ["6", str(len(table)), str(sum(totals.values()))]


def test_report_images_exist_and_decode(test_run):
    wd, _ = test_run
    report = wd / "results/report"
    for name in ("rarefaction", "alpha_diversity", "ordination", "read_tracking"):
        w, h = png_pixels(report / f"{name}.png")
        assert w >= 900 and h >= 700
        pdf = (report / f"{name}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF") and len(pdf) > 3000
    alpha = read_tsv(report / "alpha_diversity.tsv")
    table = read_table(wd / "results/otu_table.tsv")
    for sample, row in alpha.items():
        assert int(float(row["Observed"])) == sum(1 for r in table.values() if r[sample] > 0)


def sintax_reference(dest: Path) -> Path:
    """DADA2's example training set (">Kingdom;Phylum;...;Genus;") as a SINTAX database."""
    source = TRAIN_SET
    if not source.exists():
        unavailable("r-bioc-dada2's example_train_set.fa.gz is not installed")
    out, ranks = [], "kpcofg"
    with gzip.open(source, "rt") as f:
        for n, line in enumerate(f):
            if line.startswith(">"):
                names = [x for x in line[1:].strip().split(";") if x]
                tax = ",".join(f"{r}:{x}" for r, x in zip(ranks, names))
                out.append(f">ref{n};tax={tax};\n")
            else:
                out.append(line)
    dest.write_text("".join(out))
    return dest


def test_cores_1_and_shards_give_the_same_table_and_sintax_taxonomy(
    test_run, snakemake_exe, tmp_path
):
    """--cores 1, the pair search in 3 shard jobs (cluster.shards: 3, the OTUs grown on
    their pairs with bioaccel cluster --edges) and SINTAX: the same OTU table, OTUs and
    read tracking as the default run."""
    wd0, _ = test_run
    wd = copy_workflow(tmp_path)
    config = wd / ".test/config/config.yaml"
    config.write_text(config.read_text().replace("cluster:\n", "cluster:\n  shards: 3\n", 1))
    ref = sintax_reference(wd / "sintax.fa")
    extra = QUICK.replace(
        "taxonomy: {method: none}", f"taxonomy: {{method: sintax, reference: {ref}}}"
    )
    cfg = write_config(wd, ".test/config/samples.tsv", extra)
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg, cores=1)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for k in (1, 2, 3):
        assert (wd / f"logs/cluster/neighbours_{k}of3.log").exists()  # the shard jobs ran
    for name in ("otu_table.tsv", "otus.fasta", "read_tracking.tsv"):
        assert (wd / "results" / name).read_bytes() == (wd0 / "results" / name).read_bytes()
    assert not (wd / "results/report").exists()
    # SINTAX's calls, one column per rank, the OTUs in the table's order
    lines = (wd / "results/taxonomy.tsv").read_text().splitlines()
    assert lines[0].split("\t") == ["OTU", "Kingdom", "Phylum", "Class", "Order", "Family", "Genus"]
    rows = [ln.split("\t") for ln in lines[1:]]
    assert [r[0] for r in rows] == list(read_table(wd / "results/otu_table.tsv"))
    # the tiny training set leaves several V4 OTUs without a SINTAX hit (empty rows); those
    # it classifies are Bacteria, with DADA2's phylum when DADA2 has one
    called = [r for r in rows if r[1]]
    assert len(called) >= 5 and all(r[1] == "Bacteria" for r in called)
    dada2 = read_tsv(wd0 / "results/taxonomy.tsv")
    both = [r for r in called if r[2] and dada2[r[0]]["Phylum"]]
    assert both and all(r[2] == dada2[r[0]]["Phylum"] for r in both)


def test_one_single_end_sample(snakemake_exe, tmp_path):
    """One sample of forward reads only (no merging) and no chimera step: the oracle
    agrees."""
    tools()
    wd = copy_workflow(tmp_path / "wf")
    sheet = write_sheet(wd, {"solo": (".test/data/sam2_R1.fastq.gz",)}, "one.tsv")
    cfg = write_config(wd, sheet, QUICK + "chimeras: {method: none}\n")
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (wd / "results/merge").exists()
    table, _, filtered = amplicon_oracle.run(
        {"solo": (str(wd / ".test/data/sam2_R1.fastq.gz"),)},
        tmp_path / "fred",
        amplicon_oracle.Settings(chimeras="none"),
    )
    assert read_table(wd / "results/otu_table.tsv") == table
    row = read_tsv(wd / "results/read_tracking.tsv")["solo"]
    assert row["merged"] == row["trimmed"] and int(row["filtered"]) == filtered["solo"]


def test_ten_samples_reusing_files(snakemake_exe, tmp_path):
    tools()
    wd = copy_workflow(tmp_path / "wf")
    names = list(TEST_SAMPLES)
    rows = {f"s{i:02d}": TEST_SAMPLES[names[i % 3]] for i in range(10)}
    cfg = write_config(
        wd, write_sheet(wd, rows, "ten.tsv"), QUICK + "chimeras: {method: uchime3_denovo}\n"
    )
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = read_table(wd / "results/otu_table.tsv")
    files = {s: tuple(str(wd / f) for f in fs) for s, fs in rows.items()}
    expected, _, _ = amplicon_oracle.run(
        files, tmp_path / "fred", amplicon_oracle.Settings(chimeras="uchime3_denovo")
    )
    assert table == expected
    tracking = read_tsv(wd / "results/read_tracking.tsv")
    assert list(tracking) == list(rows)
    for i, sample in enumerate(rows):  # a reused file gives the same column
        twin = f"s{(i % 3):02d}"
        assert [r[sample] for r in table.values()] == [r[twin] for r in table.values()]
        assert sum(r[sample] for r in table.values()) == int(tracking[sample]["nonchimeric"])


@pytest.mark.parametrize(
    "cluster, want",
    [
        (
            "{method: greedy, identity: 0.95, identity_definition: shorter, fastidious: false}",
            "--method greedy --identity 0.95 --identity-definition shorter",
        ),
        (
            "{method: swarm, d: 1, identity_definition: shorter}",
            "cluster.identity_definition applies to greedy only (method is swarm)",
        ),
    ],
)
def test_greedy_identity_definition_reaches_the_cluster_command(
    snakemake_exe, tmp_path, cluster, want
):
    """cluster.identity_definition: passed to `bioaccel cluster` with greedy, an error
    naming the setting with another method (a dry run: no job runs)."""
    wd = copy_workflow(tmp_path)
    cfg = write_config(wd, write_sheet(wd, TEST_SAMPLES), QUICK + f"cluster: {cluster}\n")
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg, "-n", "-p")
    assert want in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-3000:]
    assert not (wd / "results").exists()


def test_bad_sample_sheets_stop_before_any_job(snakemake_exe, tmp_path):
    """A misspelled path, a paired sample with its second file missing, a sample without
    a file: each named on its line, all in one message, before any job runs."""
    wd = copy_workflow(tmp_path)
    rows = {
        "sam1": (".test/data/sam1_R1.fastq.gz", ".test/data/sam1_R3.fastq.gz"),
        "sam2": (".test/data/samm2_R1.fq.gz",),
        "sam3": ("",),
        "sam4": TEST_SAMPLES["sam2"],
    }
    cfg = write_config(wd, write_sheet(wd, rows, "bad.tsv"))
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg, "-n")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    (line,) = [ln for ln in out.splitlines() if "sample sheet" in ln]
    assert line == (
        "sample sheet .test/config/bad.tsv: "
        "line 2: sample 'sam1': fq2 file '.test/data/sam1_R3.fastq.gz' does not exist; "
        "line 3: sample 'sam2': fq1 file '.test/data/samm2_R1.fq.gz' does not exist; "
        "line 4: sample 'sam3' has no fq1 file"
    ), out[-2000:]
    assert not (wd / "results").exists()


def test_broken_qualities_and_mismatched_pairs_stop_before_the_read_steps(snakemake_exe, tmp_path):
    wd = copy_workflow(tmp_path)
    data = wd / ".test/data"
    with gzip.open(data / "sam1_R1.fastq.gz", "rt") as f:
        r1 = f.read().splitlines()
    with gzip.open(data / "sam1_R2.fastq.gz", "rt") as f:
        r2 = f.read().splitlines()
    broken = list(r1[:40])
    broken[7] = broken[7][:100] + " " + broken[7][101:]  # read 2, a space as a quality
    (data / "broken_R1.fastq").write_text("\n".join(broken) + "\n")
    (data / "broken_R2.fastq").write_text("\n".join(r2[:40]) + "\n")
    (data / "short_R2.fastq").write_text("\n".join(r2[:36]) + "\n")  # 9 reads against 10
    renamed = list(r2[:40])
    renamed[12] = "@another_read 2:N:0:52"
    (data / "renamed_R2.fastq").write_text("\n".join(renamed) + "\n")
    rows = {
        "good": TEST_SAMPLES["sam2"],
        "broken": (".test/data/broken_R1.fastq", ".test/data/broken_R2.fastq"),
        "short": (".test/data/sam1_R1.fastq.gz", ".test/data/short_R2.fastq"),
        "renamed": (".test/data/sam1_R1.fastq.gz", ".test/data/renamed_R2.fastq"),
    }
    cfg = write_config(wd, write_sheet(wd, rows, "bad.tsv"))
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg, "--keep-going")
    assert proc.returncode != 0
    err = proc.stderr
    assert (
        "sample 'broken': .test/data/broken_R1.fastq: read 2 ('M02273:28:000000000-ADV3A:1:2103:"
        "18540:19330'): quality character ' ' at position 101 is outside Phred+33 0..41" in err
    ), err[-3000:]
    assert (
        "sample 'short': mismatched pairs: .test/data/short_R2.fastq ends after 9 reads, "
        ".test/data/sam1_R1.fastq.gz has more" in err
    ), err[-3000:]
    assert "sample 'renamed': mismatched pairs: read 4 is" in err and "'another_read'" in err
    # nothing past the checks ran, and the failed checks left nothing
    assert (wd / "results/validate/good.tsv").exists()
    for sample in ("broken", "short", "renamed"):
        assert not (wd / f"results/validate/{sample}.tsv").exists()
    assert not (wd / "results/validate/samples.tsv").exists()
    assert not (wd / "results/trim").exists() and not (wd / "results/merge").exists()


def test_a_sample_without_reads_after_filtering_stops_before_clustering(snakemake_exe, tmp_path):
    wd = copy_workflow(tmp_path)
    data = wd / ".test/data"
    with gzip.open(data / "sam1_R1.fastq.gz", "rt") as f:
        r1 = f.read().splitlines()[:40]
    with gzip.open(data / "sam1_R2.fastq.gz", "rt") as f:
        r2 = f.read().splitlines()[:40]
    for lines in (r1, r2):  # every base of quality 2: no read passes max_ee 1
        for i in range(3, 40, 4):
            lines[i] = "#" * len(lines[i])
    (data / "poor_R1.fastq").write_text("\n".join(r1) + "\n")
    (data / "poor_R2.fastq").write_text("\n".join(r2) + "\n")
    rows = {
        "good": TEST_SAMPLES["sam2"],
        "poor": (".test/data/poor_R1.fastq", ".test/data/poor_R2.fastq"),
    }
    cfg = write_config(wd, write_sheet(wd, rows, "poor.tsv"))
    proc = snakemake(snakemake_exe, wd, "--configfile", cfg)
    assert proc.returncode != 0
    assert (
        "sample 'poor': no reads left after trimming, merging and filtering "
        "(.test/data/poor_R1.fastq; see logs/filter/poor.log)" in proc.stderr
    ), proc.stderr[-3000:]
    assert not (wd / "results/filter/poor.fasta").exists()
    assert not (wd / "results/pool").exists() and not (wd / "results/cluster").exists()


def test_slurm_profile_dry_run(snakemake_exe, tmp_path):
    wd = copy_workflow(tmp_path)
    proc = subprocess.run(
        [
            snakemake_exe,
            "--profile",
            "profiles/slurm",
            "--configfile",
            ".test/config/config.yaml",
            "--slurm-no-account",
            "-n",
        ],
        cwd=wd,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    for rule in ("validate", "trim_pairs", "merge_pairs", "filter", "cluster", "report"):
        assert f"rule {rule}:" in out or f"localrule {rule}:" in out, out[-3000:]
    assert "Using profile profiles/slurm" in out
    assert not (wd / "results").exists()


def test_every_result_is_readable_as_a_new_file_is(test_run):
    """Before: the tables the Python scripts wrote (otu_table.tsv, otus.fasta, the BIOM
    file, read tracking, validate/*.tsv) kept mkstemp's 0600, unreadable to collaborators on
    a shared server while every other output was 0644. Now each gets the umask's mode."""
    import os

    wd, _ = test_run
    umask = os.umask(0)
    os.umask(umask)
    want = 0o444 & ~umask
    files = [p for p in (wd / "results").rglob("*") if p.is_file()]
    assert files
    bad = [str(p.relative_to(wd)) for p in files if p.stat().st_mode & 0o444 != want]
    assert not bad, f"not readable as a new file is (umask {umask:03o}): {bad}"


def test_an_own_config_must_set_the_bundled_runs_primers_and_reference(snakemake_exe, tmp_path):
    """Before: `--configfile my.yaml` without primers ran with config/config.yaml's empty
    primers (the bundled reads hold none): exit 0, the primers kept in every OTU, taxonomy
    from DADA2's example set. Now such a file must set them; the run stops naming them."""
    wd = copy_workflow(tmp_path)
    sheet = write_sheet(wd, TEST_SAMPLES)
    (wd / "mine.yaml").write_text(f"samples: {sheet}\n")
    proc = snakemake(snakemake_exe, wd, "--configfile", "mine.yaml", "-n")
    said = proc.stdout + proc.stderr
    assert (
        proc.returncode != 0 and "mine.yaml: set primers" in said and "taxonomy.reference" in said
    )
    (wd / "mine.yaml").write_text(
        f'samples: {sheet}\nprimers: {{forward: "", reverse: ""}}\n' + QUICK
    )
    proc = snakemake(snakemake_exe, wd, "--configfile", "mine.yaml", "-n")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    assert not (wd / "results").exists()


def test_a_reference_in_another_methods_format_stops_the_run(snakemake_exe, tmp_path):
    """Before: a SINTAX reference given to dada2 gave ranks named 'ref47', DADA2's training
    set given to SINTAX an empty taxonomy, a FASTQ an R error only in the log; each exit 0 or
    with the cause hidden. Now the reference's first record is checked against the method
    before any job, in one line naming it."""
    wd = copy_workflow(tmp_path)
    sintax = sintax_reference(wd / "sintax.fa")
    dada2 = "/usr/lib/R/site-library/dada2/extdata/example_train_set.fa.gz"
    fastq = wd / "reads.fq"
    fastq.write_text("@r1\nACGT\n+\nIIII\n")
    sheet = write_sheet(wd, TEST_SAMPLES)
    cases = [
        ("dada2", sintax, "is a SINTAX reference"),
        ("sintax", dada2, "has no ';tax=' annotation"),
        ("dada2", fastq, "expected FASTA ('>') training sequences"),
    ]
    for method, ref, said in cases:
        extra = f"taxonomy: {{method: {method}, reference: {ref}}}\nreport: {{enabled: false}}\n"
        cfg = write_config(wd, sheet, extra)
        proc = snakemake(snakemake_exe, wd, "--configfile", cfg, "-n")
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and said in out, out[-2000:]
    assert not (wd / "results").exists()
