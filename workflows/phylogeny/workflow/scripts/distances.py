"""One family's distance matrix from its alignment (.cdist for R, .tsv to read)."""

import sys

from bioaccel.msa_engine import MultipleAlignment, read_alignment

sys.stderr = open(snakemake.log[0], "w")

aln = read_alignment(snakemake.input[0], snakemake.params.alphabet)
# rows without a residue (empty records, or rows trimming emptied) share no site with any
# other: left out of the distances and the tree, and named here and in the summary
empty = [i for i, row in zip(aln.ids, aln.sequences) if not row.strip("-")]
if empty:
    keep = [k for k, row in enumerate(aln.sequences) if row.strip("-")]
    aln = MultipleAlignment(
        [aln.ids[k] for k in keep], [aln.sequences[k] for k in keep], aln.alphabet
    )
    print(f"left out {len(empty)} row(s) without a residue: {', '.join(empty)}", file=sys.stderr)
model = (
    snakemake.params.protein_model if aln.alphabet.name == "protein" else snakemake.params.dna_model
)
dm = aln.distance_matrix(model, pairwise_deletion=bool(snakemake.params.pairwise_deletion))
dm.write(snakemake.output.cdist)
dm.write(snakemake.output.tsv)
print(
    f"{len(aln)} rows x {aln.width} columns ({aln.alphabet.name}), model {model}", file=sys.stderr
)
