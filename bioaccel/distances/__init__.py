"""bioaccel.distances."""
