"""One table of every sample's QC summary."""

from bioaccel._core import atomic_output

sm = snakemake  # noqa: F821
rows = [open(p).read().splitlines() for p in sm.input]
with atomic_output(sm.output[0]) as f:
    f.write(rows[0][0] + "\n")
    for _header, values in rows:
        f.write(values + "\n")
