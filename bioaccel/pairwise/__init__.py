"""bioaccel.pairwise."""
