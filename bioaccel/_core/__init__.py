"""bioaccel._core."""
