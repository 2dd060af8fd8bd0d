"""All samples' sequences in one FASTA, and the sample of each sequence."""

import logging
import re

from bioaccel._core import atomic_output
from bioaccel.sequences import read_sequences

sm = snakemake  # noqa: F821
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s")
total = 0
with atomic_output(sm.output.fasta) as fa, atomic_output(sm.output.samples) as tsv:
    tsv.write("id\tsample\tabundance\n")
    for sample, path in zip(sm.params.samples, sm.input):
        batch = read_sequences(path)
        for i, rid in enumerate(batch.ids):
            size = re.search(r";size=(\d+)$", rid)
            fa.write(f">{rid}\n{batch.sequence(i)}\n")
            tsv.write(f"{rid}\t{sample}\t{size.group(1) if size else 1}\n")
        total += len(batch)
if total < 2:
    raise SystemExit(
        f"only {total} sequence(s) left after QC and dereplication; the distance "
        "matrix needs at least 2"
    )
logging.info("pooled %d sequences from %d samples", total, len(sm.params.samples))
