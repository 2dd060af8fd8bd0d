"""The summary table: one row per family."""

import json
import sys
from pathlib import Path

from bioaccel._core import atomic_output
from bioaccel.msa_engine import read_alignment

sys.stderr = open(snakemake.log[0], "w")

treed = {Path(t).stem for t in snakemake.input.trees}
rows = ["family\tsequences\tcolumns\tgap_fraction\talignment_seconds\tgpu\ttree"]
for family, n, aln_path, stats_path in zip(
    snakemake.params.families,
    snakemake.params.n_seqs,
    snakemake.input.alignments,
    snakemake.input.stats,
):
    aln = read_alignment(aln_path)
    if len(aln) != n:
        raise ValueError(f"family {family!r}: {aln_path} has {len(aln)} rows, the family {n}")
    cells = len(aln) * aln.width
    gaps = sum(row.count("-") for row in aln.sequences)
    stats = json.loads(Path(stats_path).read_text())
    empty = sum(1 for row in aln.sequences if not row.strip("-"))
    if family in treed:
        tree = "nj" + (f" ({empty} empty left out)" if empty else "")
    else:
        tree = f"none: {n - empty} sequence" + (f" ({empty} empty)" if empty else "")
    rows.append(
        f"{family}\t{len(aln)}\t{aln.width}\t{gaps / cells if cells else 0:.4f}\t"
        f"{stats['seconds']:.3f}\t{stats['gpu']}\t{tree}"
    )
with atomic_output(snakemake.output[0]) as f:
    f.write("\n".join(rows) + "\n")
print(f"{len(rows) - 1} families, {len(treed)} with a tree", file=sys.stderr)
