"""bioaccel.sequences."""
