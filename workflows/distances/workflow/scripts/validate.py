"""Read one sample, check it, write it with sample-prefixed ids, and summarise it."""

import logging

import numpy as np

from bioaccel._core import atomic_output
from bioaccel.sequences import read_sequences

sm = snakemake  # noqa: F821  (injected by Snakemake's script: directive)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s")
sample = sm.wildcards.sample
path = sm.input[0]
try:
    batch = read_sequences(path, alphabet=sm.params.alphabet)
except Exception as exc:  # the message names the file, record and position
    logging.error("sample %s: %s", sample, exc)
    raise SystemExit(f"sample {sample!r}: {exc}") from None
if len(batch) == 0:
    logging.error("sample %s: %s holds no sequences", sample, path)
    raise SystemExit(f"sample {sample!r}: {path} holds no sequences")
seqs = [batch.sequence(i) for i in range(len(batch))]
lengths = batch.lengths
empty = [batch.ids[i] for i in range(len(batch)) if lengths[i] == 0]
if empty:
    raise SystemExit(f"sample {sample!r}: {path}: record {empty[0]!r} is empty")
n_count = np.array([s.upper().count("N") for s in seqs])
with atomic_output(sm.output.fasta) as f:
    for rid, s in zip(batch.ids, seqs):
        f.write(f">{sample}:{rid}\n{s}\n")
unique = len(set(seqs))
fields = {
    "sample": sample,
    "file": path,
    "alphabet": batch.alphabet.name,
    "sequences": len(batch),
    "total_bp": int(lengths.sum()),
    "min_length": int(lengths.min()),
    "median_length": float(np.median(lengths)),
    "mean_length": round(float(lengths.mean()), 3),
    "max_length": int(lengths.max()),
    "n_fraction": round(float(n_count.sum() / max(1, lengths.sum())), 6),
    "sequences_with_n": int((n_count > 0).sum()),
    "unique_sequences": unique,
    "duplicates": len(batch) - unique,
}
with atomic_output(sm.output.qc) as f:
    f.write("\t".join(fields) + "\n" + "\t".join(str(v) for v in fields.values()) + "\n")
logging.info(
    "sample %s: %d sequences, %d unique, lengths %d-%d",
    sample,
    len(batch),
    unique,
    lengths.min(),
    lengths.max(),
)
