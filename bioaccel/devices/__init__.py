"""GPUs of this machine: discovery, the topology between them, and the multi-GPU tile runner.

- ``_discover``: :func:`discover_devices`, :func:`select_devices` (``devices=`` argument),
  virtual GPUs for tests (``BIOACCEL_VIRTUAL_GPUS``, ``BIOACCEL_GPU_TOPOLOGY``);
- ``_topology``: GPUs, links and speeds of a node (YAML/JSON);
- ``_multigpu``: split pairs into tiles by work, run them on several devices with failover.
"""

from ._discover import Device, discover_devices, select_devices
from ._multigpu import Tile, pairwise_on_devices, run_tiles
from ._topology import GpuSpec, Topology, load_topology

__all__ = [
    "Device",
    "Tile",
    "GpuSpec",
    "Topology",
    "discover_devices",
    "load_topology",
    "pairwise_on_devices",
    "run_tiles",
    "select_devices",
]
