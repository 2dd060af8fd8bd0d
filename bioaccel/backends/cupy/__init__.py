"""bioaccel.backends.cupy."""
