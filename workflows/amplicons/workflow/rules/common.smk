import csv
import os
import re
from pathlib import Path

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml")

#: the workflow folder (the one holding workflow/, config/, .test/): sample sheet paths
#: are relative to it
HOME = Path(workflow.basedir).parent


def check_own_run_settings():
    """A run with its own config file (--configfile my.yaml, laid over config/config.yaml)
    must set what config/config.yaml sets for the bundled data only: the primers (empty
    there: the bundled reads hold none) and, with a taxonomy method, the reference (DADA2's
    small example set there). Left out, the bundled values would apply to the user's reads
    silently: primers kept in every OTU, taxonomy from a toy set."""
    import yaml

    bundled = (HOME / "config" / "config.yaml").resolve()
    own = [Path(p) for p in (workflow.overwrite_configfiles or []) if Path(p).resolve() != bundled]
    if not own:
        return
    given = {}
    for p in own:
        with open(p) as f:
            for key, value in (yaml.safe_load(f) or {}).items():
                if isinstance(value, dict) and isinstance(given.get(key), dict):
                    given[key] = {**given[key], **value}
                else:
                    given[key] = value
    given.update(getattr(workflow.config_settings, "config", None) or {})  # --config k=v
    missing = []
    if "primers" not in given:
        missing.append(
            'primers (forward and reverse, e.g. the 515F/806R defaults; "" for reads without them)'
        )
    if config["taxonomy"]["method"] != "none" and "reference" not in (given.get("taxonomy") or {}):
        missing.append("taxonomy.reference (a full training set such as SILVA's, or method: none)")
    if missing:
        raise ValueError(
            f"{', '.join(map(str, own))}: set {' and '.join(missing)}; config/config.yaml's "
            "values are the bundled data's (no primer removal, DADA2's example training set)"
        )


check_own_run_settings()


def check_reference_format(method, ref):
    """The taxonomy reference must be in the format its method reads, judged on its first
    record: FASTA whose headers are the ranks themselves (``>Bacteria;Firmicutes;...``) for
    dada2's assignTaxonomy, FASTA with ``;tax=k:...`` annotations for SINTAX. Another format
    gives garbage ranks or none, exit 0 (a SINTAX file to dada2: ranks named 'ref47')."""
    import gzip

    path = resolve(ref)
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rt", errors="replace") if gz else open(path, errors="replace")) as f:
        first = next((line.strip() for line in f if line.strip()), "")
    sintax = ";tax=" in first
    if not first.startswith(">"):
        raise ValueError(
            f"taxonomy.reference {ref!r}: starts with {first[:40]!r}; expected FASTA ('>') "
            f"training sequences for taxonomy.method {method!r}"
        )
    if method == "dada2" and sintax:
        raise ValueError(
            f"taxonomy.reference {ref!r} is a SINTAX reference (';tax=' headers); dada2 reads "
            "headers that are the ranks themselves ('>Bacteria;Firmicutes;...'): use "
            "taxonomy.method sintax, or a DADA2 training set"
        )
    if method == "sintax" and not sintax:
        raise ValueError(
            f"taxonomy.reference {ref!r} has no ';tax=' annotation in its first header "
            f"({first[:60]!r}); SINTAX reads '>id;tax=k:Bacteria,p:...': use taxonomy.method "
            "dada2, or a SINTAX reference"
        )


def resolve(path):
    """``path`` as Snakemake should use it: absolute when given so, else relative to the
    workflow folder (kept relative when that is the working directory)."""
    p = Path(path)
    if p.is_absolute():
        return str(p)
    full = HOME / p
    if HOME.resolve() == Path.cwd().resolve():
        return str(p)
    return str(full)


class Sample:
    def __init__(self, name, fq1, fq2, given1, given2):
        self.name, self.fq1, self.fq2 = name, fq1, fq2
        self.given1, self.given2 = given1, given2

    @property
    def paired(self):
        return bool(self.fq2)


def read_sample_sheet(path):
    """The sample sheet (tab-separated: sample, fq1, fq2), checked row by row before any job
    runs: a problem names the line, the sample and the file."""
    sheet = resolve(path)
    if not Path(sheet).is_file():
        raise ValueError(f"sample sheet {path!r} does not exist (config: samples)")
    with open(sheet, newline="") as f:
        rows = list(
            csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t")
        )
        columns = list(rows[0].keys()) if rows else []
    missing = [c for c in ("sample", "fq1") if c not in columns]
    if rows and missing:
        raise ValueError(
            f"sample sheet {path}: missing column(s) {missing}; expected a tab-separated "
            "sheet with columns 'sample', 'fq1' and 'fq2' (fq2 empty for single-end reads)"
        )
    problems, out = [], {}
    for line, row in enumerate(rows, start=2):
        sample = (row.get("sample") or "").strip()
        fq1 = (row.get("fq1") or "").strip()
        fq2 = (row.get("fq2") or "").strip()
        if not sample:
            problems.append(f"line {line}: empty sample name")
            continue
        if not re.fullmatch(r"[A-Za-z0-9._-]+", sample):
            problems.append(f"line {line}: sample {sample!r}: use letters, digits, '.', '_', '-'")
            continue
        if sample in out:
            problems.append(f"line {line}: sample {sample!r} repeated")
            continue
        if not fq1:
            problems.append(f"line {line}: sample {sample!r} has no fq1 file")
            continue
        for column, given in (("fq1", fq1), ("fq2", fq2)):
            if given and not Path(resolve(given)).is_file():
                problems.append(
                    f"line {line}: sample {sample!r}: {column} file {given!r} does not exist"
                )
        if fq2 and Path(resolve(fq1)).resolve() == Path(resolve(fq2)).resolve():
            problems.append(f"line {line}: sample {sample!r}: fq1 and fq2 are the same file")
        validate({"sample": sample, "fq1": fq1, "fq2": fq2}, schema="../schemas/samples.schema.yaml")
        out[sample] = Sample(sample, resolve(fq1), resolve(fq2) if fq2 else "", fq1, fq2)
    if not rows:
        problems.append("no samples")
    if problems:
        raise ValueError(f"sample sheet {path}: " + "; ".join(problems))
    return out


samples = read_sample_sheet(config["samples"])
PAIRED = [s for s in samples if samples[s].paired]
SINGLE = [s for s in samples if not samples[s].paired]
PRIMERS = config["primers"]
TRIM = bool(PRIMERS["forward"] or PRIMERS["reverse"])
TAXONOMY = config["taxonomy"]
if TAXONOMY["method"] != "none":
    ref = TAXONOMY["reference"]
    if not ref:
        raise ValueError(f"taxonomy.method {TAXONOMY['method']!r} needs taxonomy.reference")
    if not Path(resolve(ref)).is_file():
        raise ValueError(f"taxonomy.reference {ref!r} does not exist")
    check_reference_format(TAXONOMY["method"], ref)


def one_of(names):
    """A wildcard regex matching exactly these sample names (nothing when empty)."""
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


wildcard_constraints:
    sample=one_of(samples),


def fastq(wildcards):
    """The sample's FASTQ file(s) as the sheet names them."""
    s = samples[wildcards.sample]
    return [s.fq1, s.fq2] if s.paired else [s.fq1]


def trimmed(wildcards):
    """The reads after primer removal (the input reads when no primer is set)."""
    s = samples[wildcards.sample]
    if not TRIM:
        return fastq(wildcards)
    if s.paired:
        return [f"results/trim/{s.name}_R1.fastq.gz", f"results/trim/{s.name}_R2.fastq.gz"]
    return [f"results/trim/{s.name}.fastq.gz"]


def to_filter(wildcards):
    """What the expected-error filter reads: the merged pairs, or the single-end reads."""
    s = samples[wildcards.sample]
    return f"results/merge/{s.name}.fastq" if s.paired else trimmed(wildcards)[0]


def cluster_options():
    """The `bioaccel cluster` options of the config; settings that do not apply to the
    chosen method are errors, not silently dropped."""
    c = config["cluster"]
    method, problems = c["method"], []
    opts = [f"--method {method}"]
    if method == "greedy":
        opts.append(f"--identity {c['identity'] if c['identity'] is not None else 0.97}")
        if c["identity_definition"] is not None:
            opts.append(f"--identity-definition {c['identity_definition']}")
        if c["differences"] == "swarm":
            problems.append("cluster.differences: swarm does not apply to greedy")
    else:
        opts.append(f"-d {c['d']}")
        opts.append(f"--differences {c['differences'] or 'swarm'}")
        if c["identity"] is not None:
            problems.append(f"cluster.identity applies to greedy only (method is {method})")
        if c["identity_definition"] is not None:
            problems.append(
                f"cluster.identity_definition applies to greedy only (method is {method})"
            )
    if c["shards"] > 1 and method == "greedy":
        problems.append("cluster.shards applies to swarm and linkage (method is greedy)")
    if c["fastidious"]:
        if method != "swarm" or c["d"] != 1:
            problems.append(
                f"cluster.fastidious applies to swarm with d = 1 (method {method}, "
                f"d {c['d']}): set cluster.fastidious: false"
            )
        opts.append(f"--fastidious --boundary {c['boundary']}")
    if problems:
        raise ValueError("config: " + "; ".join(problems))
    return " ".join(opts)


def cluster_edges():
    """The neighbour tables of the pair search's shards (none with cluster.shards: 1)."""
    count = config["cluster"]["shards"]
    if count <= 1:
        return []
    return [f"results/cluster/edges/part{k}of{count}.npz" for k in range(1, count + 1)]


def tracking_inputs(wildcards):
    """Per-sample read counts of each step (cutadapt JSON reports, merged-pair counts)."""
    out = {}
    if TRIM:
        out["trim"] = expand("results/trim/{sample}.json", sample=samples)
    out["merge"] = expand("results/merge/{sample}.count", sample=PAIRED)
    return out


def all_outputs():
    out = ["results/otu_table.tsv", "results/otus.fasta", "results/read_tracking.tsv"]
    if config["biom"]:
        out.append("results/otu_table.biom")
    if TAXONOMY["method"] != "none":
        out.append("results/taxonomy.tsv")
    if config["report"]["enabled"]:
        out.append("results/phyloseq.rds")
        out += expand(
            "results/report/{plot}.{ext}",
            plot=["rarefaction", "alpha_diversity", "ordination", "read_tracking"],
            ext=["png", "pdf"],
        )
        out.append("results/report/alpha_diversity.tsv")
    return out
