"""One family's distance matrix from its alignment (.cdist for R, .tsv to read)."""

import sys

from bioaccel.msa_engine import read_alignment

sys.stderr = open(snakemake.log[0], "w")

aln = read_alignment(snakemake.input[0], snakemake.params.alphabet)
model = snakemake.params.protein_model if aln.alphabet.name == "protein" else \
    snakemake.params.dna_model
dm = aln.distance_matrix(model,
                         pairwise_deletion=bool(snakemake.params.pairwise_deletion))
dm.write(snakemake.output.cdist)
dm.write(snakemake.output.tsv)
print(f"{len(aln)} rows x {aln.width} columns ({aln.alphabet.name}), model "
      f"{model}", file=sys.stderr)
