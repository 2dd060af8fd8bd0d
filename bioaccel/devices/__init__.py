"""bioaccel.devices."""
