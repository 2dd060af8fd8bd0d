"""Collapse identical sequences of one sample (most abundant first)."""

import logging
from collections import Counter

from bioaccel._core import atomic_output
from bioaccel.sequences import read_sequences

sm = snakemake  # noqa: F821
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s")
sample = sm.wildcards.sample
minimum = int(sm.params.min_abundance)
batch = read_sequences(sm.input[0])
counts = Counter(batch.sequence(i) for i in range(len(batch)))
kept = [
    (seq, n) for seq, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= minimum
]
if not kept:
    logging.error("sample %s: no sequence is seen %d times or more", sample, minimum)
    raise SystemExit(
        f"sample {sample!r}: none of its {len(counts)} distinct sequences is seen "
        f"at least {minimum} times (dereplicate.min_abundance)"
    )
with atomic_output(sm.output[0]) as f:
    for rank, (seq, n) in enumerate(kept, start=1):
        f.write(f">{sample}:u{rank};size={n}\n{seq}\n")
logging.info(
    "sample %s: %d sequences, %d distinct, %d kept (abundance >= %d)",
    sample,
    len(batch),
    len(counts),
    len(kept),
    minimum,
)
