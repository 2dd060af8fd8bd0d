"""The OTU table (samples x non-chimeric OTUs, read counts), the OTU representatives and
the per-sample read tracking, built as Fred's metabarcoding pipeline builds its contingency
table: every amplicon (SHA-1 id) of a sample's dereplicated reads adds its abundance to the
OTU holding it (the -o clusters file, seed first), and OTUs whose seed uchime calls a
chimera (Y) or borderline (?) are left out.

Streaming: the clusters file, the seeds and each sample's amplicons are read once, line by
line; memory holds one OTU number per unique sequence and the sparse counts (never an
OTU x OTU or amplicon x amplicon anything)."""

import contextlib
import json
import os
import sys
import tempfile

import numpy as np
from scipy import sparse

sm = snakemake  # noqa: F821  (injected by Snakemake's script: directive)
log = open(sm.log[0], "w")  # the log, closed at the end


def fail(message):
    print(message, file=log)
    print(message, file=sys.stderr)
    sys.exit(1)


def _readable(tmp):
    """mkstemp makes 0600: give the result the permissions a new file gets (umask), so that
    collaborators can read it as they read the other outputs."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)


@contextlib.contextmanager
def atomic(path):
    """Write ``path`` through a temporary file beside it, renamed when complete."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".otu_table-")
    try:
        with os.fdopen(fd, "w") as f:
            yield f
        _readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def label(header):
    """An amplicon's id: the header without ';size=N' (and swarm's trailing ';')."""
    return header.split(";", 1)[0]


def size(header, where):
    for field in header.split(";")[1:]:
        if field.startswith("size="):
            return int(field[5:])
    fail(f"{where}: {header!r} has no ';size=' abundance")


# 1. the OTUs: amplicon id -> OTU number (clusters file order), each OTU's seed
otu_of, seeds = {}, []
with open(sm.input.otus) as f:
    for n, line in enumerate(f):
        members = line.split()
        if not members:
            fail(f"{sm.input.otus}: line {n + 1} is empty")
        seeds.append(label(members[0]))
        for m in members:
            otu_of[label(m)] = n
n_otus = len(seeds)

# 2. chimera status of each seed (uchimeout: query header 2nd, status last)
status = {}
with open(sm.input.uchime) as f:
    for line in f:
        fields = line.rstrip("\n").split("\t")
        status[label(fields[1])] = fields[-1]
missing = [s for s in seeds if s not in status]
if missing:
    fail(f"{sm.input.uchime}: no chimera status for seed {missing[0]!r}")
keep = np.array([status[s] == "N" for s in seeds], dtype=bool)

# 3. per sample: amplicon abundances added to their OTU (a sparse column per sample)
names = list(sm.params.samples)
columns, filtered, uniques = [], {}, {}
for sample, path in zip(names, sm.input.derep):
    index, counts = [], []
    with open(path) as f:
        for line in f:
            if line.startswith(">"):
                header = line[1:].rstrip("\n")
                amplicon = label(header)
                otu = otu_of.get(amplicon)
                if otu is None:
                    fail(f"{path}: amplicon {amplicon!r} of sample {sample!r} is in no OTU")
                index.append(otu)
                counts.append(size(header, path))
    index = np.asarray(index, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    column = np.bincount(index, weights=counts, minlength=n_otus).astype(np.int64)
    nz = np.flatnonzero(column)
    columns.append((nz, column[nz]))
    filtered[sample] = int(counts.sum())
    uniques[sample] = len(index)
rows = np.concatenate([c[0] for c in columns]) if columns else np.empty(0, np.int64)
cols = np.concatenate([np.full(len(c[0]), j) for j, c in enumerate(columns)])
vals = np.concatenate([c[1] for c in columns])
matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(n_otus, len(names)), dtype=np.int64)
clustered = np.asarray(matrix.sum(axis=0)).ravel()
kept_rows = np.flatnonzero(keep)
table = matrix[kept_rows]
nonchimeric = np.asarray(table.sum(axis=0)).ravel()

# 4. the read counts of each step
reads_in = {}
with open(sm.input.validate) as f:
    head = f.readline().rstrip("\n").split("\t")
    for line in f:
        row = dict(zip(head, line.rstrip("\n").split("\t")))
        reads_in[row["sample"]] = int(row["reads"])
trimmed = dict(reads_in)
for path in sm.input.get("trim", []):
    sample = os.path.basename(path)[: -len(".json")]
    with open(path) as f:
        trimmed[sample] = int(json.load(f)["read_counts"]["output"])
merged = dict(trimmed)
for path in sm.input.get("merge", []):
    sample = os.path.basename(path)[: -len(".count")]
    with open(path) as f:
        merged[sample] = int(float(f.read().strip()))
for j, sample in enumerate(names):
    if clustered[j] != filtered[sample]:
        fail(
            f"sample {sample!r}: {clustered[j]} reads in OTUs but {filtered[sample]} "
            "dereplicated reads"
        )

# 5. the representatives (seed sequences) of the kept OTUs
wanted = {seeds[i] for i in kept_rows}
sequence = {}
with open(sm.input.seeds) as f:
    current = None
    for line in f:
        if line.startswith(">"):
            current = label(line[1:].rstrip("\n"))
            if current in wanted:
                sequence[current] = []
            else:
                current = None
        elif current is not None:
            sequence[current].append(line.strip())
absent = [seeds[i] for i in kept_rows if seeds[i] not in sequence]
if absent:
    fail(f"{sm.input.seeds}: seed {absent[0]!r} of an OTU is missing")

with atomic(sm.output.table) as f:
    f.write("OTU\t" + "\t".join(names) + "\n")
    block = 4096
    for start in range(0, len(kept_rows), block):
        dense = table[start : start + block].toarray()
        for k, values in enumerate(dense):
            f.write(seeds[kept_rows[start + k]] + "\t" + "\t".join(map(str, values)) + "\n")
with atomic(sm.output.fasta) as f:
    for i in kept_rows:
        f.write(f">{seeds[i]}\n{''.join(sequence[seeds[i]])}\n")
steps = ["reads_in", "trimmed", "merged", "filtered", "uniques", "clustered", "nonchimeric"]
with atomic(sm.output.tracking) as f:
    f.write("sample\t" + "\t".join(steps) + "\n")
    for j, s in enumerate(names):
        values = [
            reads_in[s],
            trimmed[s],
            merged[s],
            filtered[s],
            uniques[s],
            int(clustered[j]),
            int(nonchimeric[j]),
        ]
        f.write(s + "\t" + "\t".join(map(str, values)) + "\n")
if sm.output.get("biom"):
    from biom import Table

    biom_table = Table(table.tocsc(), [seeds[i] for i in kept_rows], names, type="OTU table")
    with atomic(sm.output.biom) as f:
        biom_table.to_json("bioaccel amplicon workflow", direct_io=f)
print(
    f"{n_otus} OTUs, {len(kept_rows)} non-chimeric kept; reads per sample: "
    + ", ".join(f"{s} {int(nonchimeric[j])}" for j, s in enumerate(names)),
    file=log,
)
log.close()
