"""GPU scheduling on one server and beyond.

- :mod:`.devices`: which GPUs this process may use (CUDA, Slurm, virtual GPUs);
- :mod:`.leases`: exclusive or K-way shared GPU leases across the processes and users of a
  host (``flock``), through :mod:`.rundir` (files safe in a shared folder) and
  :mod:`.identity` (the kernel's user, the shares file and its accounts);
- :mod:`.multigpu`: ``devices=`` data parallelism with failover inside one call;
- :mod:`.policies`: fcfs, priority, fair-share, predicted (aged shortest-first);
- :mod:`.history`: run history in SQLite and the runtime predictor fitted from it;
- :mod:`.placement`: greedy, LPT, local search, GA, ACO, PSO placement with data locality;
- :mod:`.simulator`: a discrete-event simulator comparing them;
- ``snakemake_scheduler_plugin_bioaccel``: the Snakemake scheduler plugin.
"""

from ..devices._discover import Device, discover_devices, select_devices
from .leases import GpuBroker, Lease, lease, run_dir
from .policies import POLICIES, Request, make_policy

__all__ = [
    "POLICIES",
    "Device",
    "GpuBroker",
    "Lease",
    "Request",
    "discover_devices",
    "lease",
    "make_policy",
    "run_dir",
    "select_devices",
]
