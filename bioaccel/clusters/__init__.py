"""Amplicon clustering on the sparse graph of pairs within a threshold (operations layer).

- ``_cluster``: :func:`cluster` (swarm's growth with OTU breaking and fastidious grafting,
  single linkage, greedy centroids; edit or swarm differences), :class:`Clustering` (labels,
  seeds, abundances, and writers of swarm's outputs plus an assignments TSV) and
  :func:`swarm_alignments` (swarm's alignment differences, identity and CIGAR);
- ``_amplicons``: :func:`read_amplicons` / :class:`Amplicons`, dereplicated FASTA with
  ``;size=N`` annotations, checked and put in swarm's order.

The pairs come from :func:`bioaccel.neighbors.neighbors`.
"""

from ._amplicons import Amplicons, read_amplicons
from ._cluster import (
    DIFFERENCES,
    MAX_DIFFERENCES,
    METHODS,
    OUTPUT_KINDS,
    Clustering,
    check_output_name,
    cluster,
    swarm_alignments,
)

__all__ = [
    "MAX_DIFFERENCES",
    "DIFFERENCES",
    "METHODS",
    "OUTPUT_KINDS",
    "Amplicons",
    "Clustering",
    "check_output_name",
    "cluster",
    "read_amplicons",
    "swarm_alignments",
]
