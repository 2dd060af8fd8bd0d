"""GPU scheduling on one server and beyond (the GPUs themselves: :mod:`bioaccel.devices`).

- ``leases``: exclusive or K-way shared GPU leases across the processes and users of a host
  (``flock``), the arbiter's configuration and administration;
- ``rundir``: files in a run directory shared by many Unix users, created and read safely;
- ``identity``: the kernel's user, the shares file and its accounts;
- ``procs``: what the kernel says about locks and processes (``/proc``);
- ``run``: a command run on leased GPUs (``bioaccel gpu-run``);
- ``policies``: fcfs, priority, fair-share, predicted (aged shortest-first);
- ``history``: run history in SQLite and the runtime predictor fitted from it;
- ``placement``: greedy, LPT, local search, GA, ACO, PSO placement with data locality;
- ``simulator``: a discrete-event simulator comparing them.

The Snakemake scheduler plugin is the package ``snakemake_scheduler_plugin_bioaccel``.
"""

from .._core import lazy_getattr
from ..devices import Device, discover_devices, select_devices
from .leases import GpuBroker, Lease, lease, run_dir
from .policies import POLICIES, Request, make_policy

__all__ = [
    "ALGORITHMS",
    "DEFAULT_RUN_DIR",
    "Device",
    "GpuBroker",
    "History",
    "Job",
    "Lease",
    "PLACEMENTS",
    "POLICIES",
    "Request",
    "Run",
    "RuntimePredictor",
    "Stage",
    "current_user",
    "discover_devices",
    "flood_workload",
    "heavy_tailed_workload",
    "host_shares",
    "human_duration",
    "human_time",
    "init_run_dir",
    "lease",
    "lower_bound",
    "make_policy",
    "parse_shares",
    "place",
    "processing_times",
    "run_dir",
    "run_leased",
    "select_devices",
    "simulate",
    "workload_from_sequences",
]

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "ALGORITHMS": (".placement", "ALGORITHMS"),
    "DEFAULT_RUN_DIR": (".leases", "DEFAULT_RUN_DIR"),
    "History": (".history", "History"),
    "Job": (".simulator", "Job"),
    "PLACEMENTS": (".simulator", "PLACEMENTS"),
    "Run": (".history", "Run"),
    "RuntimePredictor": (".history", "RuntimePredictor"),
    "Stage": (".placement", "Stage"),
    "current_user": (".identity", "current_user"),
    "flood_workload": (".simulator", "flood_workload"),
    "heavy_tailed_workload": (".simulator", "heavy_tailed_workload"),
    "host_shares": (".leases", "host_shares"),
    "human_duration": (".leases", "human_duration"),
    "human_time": (".leases", "human_time"),
    "init_run_dir": (".leases", "init_run_dir"),
    "lower_bound": (".placement", "lower_bound"),
    "parse_shares": (".policies", "parse_shares"),
    "place": (".placement", "place"),
    "processing_times": (".placement", "processing_times"),
    "run_leased": (".run", "run_leased"),
    "simulate": (".simulator", "simulate"),
    "workload_from_sequences": (".simulator", "workload_from_sequences"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)
