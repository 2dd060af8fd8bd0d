"""bioaccel.backends.numba."""
