"""Gap-fraction column filter: keep the columns with at most max_gap_fraction gaps."""

import sys

from bioaccel._core import atomic_output
from bioaccel.msa_engine import read_alignment

sys.stderr = open(snakemake.log[0], "w")

limit = float(snakemake.params.max_gap_fraction)
aln = read_alignment(snakemake.input[0])
n = len(aln)
keep = [c for c in range(aln.width) if sum(row[c] == "-" for row in aln.sequences) <= limit * n]
rows = ["".join(row[c] for c in keep) for row in aln.sequences]
with atomic_output(snakemake.output[0]) as f:
    f.write("".join(f">{i}\n{r}\n" for i, r in zip(aln.ids, rows)))
empty = [i for i, r in zip(aln.ids, rows) if r and set(r) == {"-"}]
print(
    f"kept {len(keep)} of {aln.width} columns (gap fraction <= {limit}); "
    f"{len(empty)} row(s) left all gaps: {empty}",
    file=sys.stderr,
)
