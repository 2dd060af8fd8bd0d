"""Hierarchical clusters (SciPy) of the distance matrix, cut at each threshold."""

import logging

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from bioaccel._core import atomic_output
from bioaccel.distances import DistanceMatrix

sm = snakemake  # noqa: F821
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s")
dm = DistanceMatrix.read(sm.input.matrix)
condensed = dm.condensed()
bad = ~np.isfinite(condensed)
if bad.any():
    raise SystemExit(
        f"{int(bad.sum())} distance(s) are NaN or infinite (e.g. unrelated "
        "sequences under this model); clustering needs finite distances"
    )
sample_of = {}
with open(sm.input.samples) as f:
    next(f)
    for line in f:
        rid, sample, _ = line.rstrip("\n").split("\t")
        sample_of[rid] = sample
tree = linkage(condensed, method=sm.params.linkage) if len(dm) > 1 else None
columns = {}
for t in sm.params.thresholds:
    labels = fcluster(tree, t=float(t), criterion="distance")
    # number clusters by size, largest first (then by first member) for stable output
    order = sorted(set(labels), key=lambda c: (-np.sum(labels == c), np.argmax(labels == c)))
    rename = {c: k + 1 for k, c in enumerate(order)}
    columns[f"cluster_{t:g}"] = [rename[c] for c in labels]
    logging.info("threshold %g (%s linkage): %d clusters", t, sm.params.linkage, len(order))
with atomic_output(sm.output[0]) as f:
    f.write("id\tsample\t" + "\t".join(columns) + "\n")
    for k, rid in enumerate(dm.ids):
        f.write(
            f"{rid}\t{sample_of[rid]}\t" + "\t".join(str(v[k]) for v in columns.values()) + "\n"
        )
