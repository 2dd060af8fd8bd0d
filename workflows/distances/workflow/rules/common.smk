import csv
from pathlib import Path

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml")


class Sample:
    def __init__(self, name, path):
        self.name, self.path = name, path


def read_sample_sheet(path):
    """The sample sheet (tab-separated: sample, path), checked row by row; a clear error
    names the line and sample at fault. Paths are relative to the working directory."""
    if not Path(path).is_file():
        raise ValueError(f"sample sheet {path!r} does not exist (config: samples)")
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader((ln for ln in f if not ln.startswith("#")),
                                          delimiter="\t")]
        columns = rows[0].keys() if rows else []
    missing = [c for c in ("sample", "path") if c not in columns]
    if rows and missing:
        raise ValueError(f"sample sheet {path}: missing column(s) {missing}; expected a "
                         "tab-separated sheet with columns 'sample' and 'path'")
    problems, seen, out = [], set(), {}
    for line, row in enumerate(rows, start=2):
        sample, file = (row.get("sample") or "").strip(), (row.get("path") or "").strip()
        if not sample:
            problems.append(f"line {line}: empty sample name")
            continue
        if not all(c.isalnum() or c in "._-" for c in sample):
            problems.append(f"line {line}: sample {sample!r}: use letters, digits, '.', '_', '-'")
        if sample in seen:
            problems.append(f"line {line}: sample {sample!r} repeated")
        seen.add(sample)
        if not file:
            problems.append(f"line {line}: sample {sample!r} has no path")
        elif not Path(file).is_file():
            problems.append(f"line {line}: sample {sample!r}: file {file!r} does not exist")
        else:
            validate({"sample": sample, "path": file}, schema="../schemas/samples.schema.yaml")
        out[sample] = Sample(sample, file)
    if not rows:
        problems.append("no samples")
    if problems:
        raise ValueError(f"sample sheet {path}: " + "; ".join(problems))
    return out


samples = read_sample_sheet(config["samples"])
BLOCKS = int(config["distance"]["tiles"])
TILES = [(a, b) for a in range(BLOCKS) for b in range(a, BLOCKS)]


wildcard_constraints:
    sample="[A-Za-z0-9._-]+",
    a=r"\d+",
    b=r"\d+",


def sample_file(wildcards):
    return samples[wildcards.sample].path


def prepared(wildcards):
    """Per-sample sequences after validation and, when enabled, dereplication."""
    stage = "dereplicate" if config["dereplicate"]["enabled"] else "validate"
    return [f"results/{stage}/{s}.fasta" for s in samples]


def all_outputs():
    out = [
        "results/qc_summary/qc.tsv",
        "results/merge/distances.cdist",
        "results/merge/distances.tsv",
        f"results/tree/{config['tree']['method']}.nwk",
        "results/clusters/clusters.tsv",
    ]
    if config["report"]["enabled"]:
        out += expand("results/report/{plot}.{ext}", plot=["heatmap", "tree", "pcoa"],
                      ext=["png", "pdf"])
        out.append("results/report/cluster_table.tsv")
    return out


def distance_options():
    d = config["distance"]
    opts = [f"-m {d['model']}"]
    if d.get("matrix"):
        opts.append(f"--matrix {d['matrix']}")
    for key, flag in (("gap_open", "--gap-open"), ("gap_extend", "--gap-extend"), ("k", "-k"),
                      ("sketch_size", "--sketch-size")):
        if d.get(key) is not None:
            opts.append(f"{flag} {d[key]}")
    if d.get("pairwise_deletion"):
        opts.append("--pairwise-deletion")
    return " ".join(opts)
