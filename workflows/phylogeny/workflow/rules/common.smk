import csv
import gzip
import sys
from pathlib import Path

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml")

#: family files in a folder: these suffixes, optionally gzipped; other files are skipped
#: with a warning that names them (documented in README.md)
FASTA_SUFFIXES = (".fa", ".fasta", ".faa", ".fna", ".fas")
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class Family:
    """One gene family: its file, sequence count and cost (sequences x mean length)."""

    def __init__(self, name, path, n_seqs, residues, n_nonempty=None):
        self.name, self.path, self.n_seqs = name, path, n_seqs
        #: records holding residues: the tree's tips (empty records are left out of it)
        self.n_nonempty = n_seqs if n_nonempty is None else n_nonempty
        self.length = residues / n_seqs
        self.cells = int(round(n_seqs * self.length))  # sequences x length: the msa cost


def family_name(path):
    """The family name of a file (its name less the FASTA suffix and .gz); None for a
    file that is not FASTA."""
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix in FASTA_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def scan_fasta(name, path):
    """Count the sequences and residues of a family file (plain FASTA scan, no bioaccel
    needed at parse time); an empty or non-FASTA file is an error naming the family."""
    opener = gzip.open if str(path).endswith(".gz") else open
    n = residues = nonempty = 0
    current = 0  # residues of the record being read
    with opener(path, "rt") as f:
        for k, line in enumerate(f, start=1):
            line = line.strip()
            if not line:
                continue
            if line.startswith(">"):
                nonempty += current > 0
                current = 0
                n += 1
            elif n == 0:
                raise ValueError(f"family {name!r}: {path}: line {k} is {line[:40]!r}; expected "
                                 "FASTA, whose first non-blank line starts with '>'")
            else:
                count = len(line) - line.count("-") - line.count(".")
                residues += count
                current += count
    nonempty += current > 0
    if n == 0:
        raise ValueError(f"family {name!r}: {path} is empty: no sequences (remove the file, "
                         "or give the family its sequences)")
    if residues == 0:
        raise ValueError(f"family {name!r}: {path}: {n} record(s) and no residues")
    return Family(name, str(path), n, residues, nonempty)


def family_files(source):
    """(name, path) of every family: a folder of FASTA files, or a tab-separated sheet with
    columns family, path. Duplicate names and bad names are errors; a folder's non-FASTA
    files are skipped with a warning naming them."""
    src = Path(source)
    problems, pairs = [], []
    if src.is_dir():
        skipped = []
        for path in sorted(p for p in src.iterdir() if p.is_file()):
            if path.name.startswith("."):
                continue
            name = family_name(path)
            if name is None:
                skipped.append(path.name)
            else:
                pairs.append((name, str(path), f"{path.name}"))
        if skipped:
            print(f"phylogeny: skipping {len(skipped)} file(s) of {src} that are not FASTA "
                  f"(families are {', '.join(f'*{s}' for s in FASTA_SUFFIXES)}, optionally "
                  f".gz): {', '.join(skipped)}", file=sys.stderr)
    elif src.is_file():
        with open(src, newline="") as f:
            rows = list(csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t"))
        if rows and not {"family", "path"} <= set(rows[0]):
            raise ValueError(f"family sheet {src}: expected the columns 'family' and 'path' "
                             f"(tab-separated), got {list(rows[0])}")
        for line, row in enumerate(rows, start=2):
            name, path = (row["family"] or "").strip(), (row["path"] or "").strip()
            if not path or not Path(path).is_file():
                problems.append(f"line {line}: family {name!r}: file {path!r} does not exist")
            pairs.append((name, path, f"line {line}"))
    else:
        raise ValueError(f"families: {source!r} is neither a folder of FASTA files nor a "
                         "family sheet (config: families)")
    seen = {}
    for name, path, where in pairs:
        if not name or not set(name) <= NAME_CHARS:
            problems.append(f"{where}: family name {name!r}: use letters, digits, '.', '_', '-'")
        if name in seen:
            problems.append(f"family {name!r} twice: {seen[name]} and {where}; family names "
                            "must be unique (rename one file)")
        seen.setdefault(name, where)
    if not pairs:
        problems.append(f"no families in {source}")
    if problems:
        raise ValueError(f"families {source}: " + "; ".join(problems))
    return [(name, path) for name, path, _ in pairs]


families = {name: scan_fasta(name, path) for name, path in family_files(config["families"])}
#: families with a tree: at least two sequences with residues (a family of one gets its
#: alignment only, and the summary and report say "none: 1 sequence"); records without a
#: residue are aligned (an all-gap row) and left out of the distances and trees, which the
#: summary says
TREED = [f for f in families if families[f].n_nonempty >= 2]
ML_TREED = [f for f in families if families[f].n_nonempty >= 3]


wildcard_constraints:
    family="[A-Za-z0-9._-]+",


def family_file(wildcards):
    return families[wildcards.family].path


def family_cells(wildcards):
    return families[wildcards.family].cells


def aligned(wildcards):
    """The alignment the distances and trees use: trimmed when trimming is on."""
    stage = "trim" if config["trim"]["enabled"] else "msa"
    return f"results/{stage}/{wildcards.family}.fa"


def ml_trees():
    if not config["ml_tree"]["enabled"]:
        return []
    return expand("results/ml_tree/{family}.nwk", family=ML_TREED)


def all_outputs():
    out = expand("results/msa/{family}.fa", family=families)
    out += expand("results/tree/{family}.nwk", family=TREED)
    out += ml_trees()
    out.append("results/summary/summary.tsv")
    if config["report"]["enabled"]:
        out += ["results/report/trees.pdf", "results/report/summary.png"]
        if TREED:
            out.append("results/report/heatmap.png")
    return out


def msa_options():
    m = config["msa"]
    opts = [f"--alphabet {m['alphabet']}", f"--guide-tree {m['guide_tree']}"]
    if m["refine"] != "auto":
        opts.append("--refine" if m["refine"] else "--no-refine")
    return " ".join(opts)


def heatmap_family():
    """The family whose distances the heatmap shows: configured, else the largest treed."""
    chosen = config["report"].get("heatmap_family")
    if chosen:
        if chosen not in TREED:
            raise ValueError(f"report.heatmap_family {chosen!r} is not a family with a tree "
                             f"(families with >= 2 sequences: {TREED})")
        return chosen
    return max(TREED, key=lambda f: (families[f].n_seqs, f)) if TREED else None
