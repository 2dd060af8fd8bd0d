"""bioaccel.trees."""
