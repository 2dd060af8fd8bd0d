"""One family's distance matrix from its alignment (.cdist for R, .tsv to read)."""

import sys

from bioaccel.msa_engine import read_alignment

sys.stderr = open(snakemake.log[0], "w")

aln = read_alignment(snakemake.input[0], snakemake.params.alphabet)
dm = aln.distance_matrix(snakemake.params.model,
                         pairwise_deletion=bool(snakemake.params.pairwise_deletion))
dm.write(snakemake.output.cdist)
dm.write(snakemake.output.tsv)
print(f"{len(aln)} rows x {aln.width} columns ({aln.alphabet.name}), model "
      f"{snakemake.params.model}", file=sys.stderr)
