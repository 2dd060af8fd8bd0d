"""GPU discovery: which devices this process may use.

Order of discovery: virtual devices when ``BIOACCEL_VIRTUAL_GPUS=N`` or
``BIOACCEL_GPU_TOPOLOGY=file.yaml`` is set (their work runs on the CPU backend), else the
CUDA runtime through CuPy, else numba-cuda, else ``nvidia-smi``.

The devices a process may use are limited by ``CUDA_VISIBLE_DEVICES`` when it is set (the
CUDA runtime numbers them 0..k-1 in that order), else by Slurm's allocation
(``SLURM_STEP_GPUS``, then ``SLURM_JOB_GPUS``): inside an allocation bioaccel never binds
a GPU outside it. Each :class:`Device` keeps the token to put into a child's
``CUDA_VISIBLE_DEVICES`` (``visible_id``), so a lease can narrow the set further.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from ..errors import DeviceSelectionError, SchedulerConfigError
from ._topology import GpuSpec, Topology, load_topology


@dataclass(frozen=True)
class Device:
    """One usable GPU. ``index`` is its ordinal in this process (0..k-1)."""

    index: int
    visible_id: str
    name: str
    memory_bytes: int
    compute_capability: tuple[int, int]
    virtual: bool = False
    speed: float = 1.0
    fail_after_tiles: int | None = None
    max_tile_work: float | None = None

    @property
    def memory_gb(self) -> float:
        return self.memory_bytes / 1e9

    def __str__(self) -> str:
        kind = "virtual " if self.virtual else ""
        return (
            f"{kind}GPU {self.index} ({self.name}, {self.memory_gb:.0f} GB, "
            f"sm_{self.compute_capability[0]}{self.compute_capability[1]}, "
            f"CUDA_VISIBLE_DEVICES={self.visible_id})"
        )


def allowed_tokens(env=None) -> list[str] | None:
    """GPU tokens this process may use, or None for no restriction."""
    env = os.environ if env is None else env
    if "CUDA_VISIBLE_DEVICES" in env:
        raw = env["CUDA_VISIBLE_DEVICES"].strip()
        if raw in ("", "-1", "NoDevFiles"):
            return []
        return [t.strip() for t in raw.split(",") if t.strip()]
    for var in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        raw = env.get(var, "").strip()
        if raw:
            return [t.strip() for t in raw.split(",") if t.strip()]
    return None


def virtual_topology(env=None) -> Topology | None:
    env = os.environ if env is None else env
    path = env.get("BIOACCEL_GPU_TOPOLOGY")
    if path:
        topo = load_topology(path)
        return Topology(
            [GpuSpec(**{**g.__dict__, "virtual": True}) for g in topo.local_gpus()],
            topo.links,
            topo.data,
            topo.source,
        )
    count = env.get("BIOACCEL_VIRTUAL_GPUS")
    if count:
        try:
            n = int(count)
        except ValueError:
            raise SchedulerConfigError(
                f"BIOACCEL_VIRTUAL_GPUS={count!r}: expected a whole number of GPUs"
            ) from None
        return Topology.identical(n)
    return None


def _cc(text: str) -> tuple[int, int]:
    major, _, minor = str(text).partition(".")
    return int(major), int(minor or 0)


def _from_virtual(topo: Topology, allowed: list[str] | None) -> list[Device]:
    specs = topo.local_gpus()
    by_id = {g.id: g for g in specs}
    if allowed is None:
        chosen = specs
    else:
        missing = [t for t in allowed if t not in by_id]
        if missing:
            raise DeviceSelectionError(
                f"CUDA_VISIBLE_DEVICES/Slurm allow GPU(s) {missing}, which the virtual topology "
                f"does not have (it has {sorted(by_id)})"
            )
        chosen = [by_id[t] for t in allowed]
    return [
        Device(
            i,
            g.id,
            g.name,
            int(g.memory_gb * 1e9),
            _cc(g.compute_capability),
            True,
            g.speed,
            g.fail_after_tiles,
            g.max_tile_work,
        )
        for i, g in enumerate(chosen)
    ]


def _tokens_for(count: int, allowed: list[str] | None) -> list[str]:
    """The CUDA runtime numbers visible devices 0..k-1; map them back to their tokens."""
    if allowed is None:
        return [str(i) for i in range(count)]
    return allowed[:count]


def _from_cupy(allowed) -> list[Device] | None:
    try:
        import cupy

        n = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no CuPy, no driver: try the next way
        return None
    out = []
    for i, tok in zip(range(n), _tokens_for(n, allowed)):
        p = cupy.cuda.runtime.getDeviceProperties(i)
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        out.append(Device(i, tok, name, int(p["totalGlobalMem"]), (p["major"], p["minor"])))
    return out


def _from_numba(allowed) -> list[Device] | None:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return None  # the simulator's fake device is not a GPU to schedule onto
    try:
        from numba import cuda

        if not cuda.is_available():
            return None
        gpus = list(cuda.gpus)
    except Exception:
        return None
    out = []
    for i, (g, tok) in enumerate(zip(gpus, _tokens_for(len(gpus), allowed))):
        with g:
            ctx = cuda.current_context()
            free, total = ctx.get_memory_info()
            name = g.name.decode() if isinstance(g.name, bytes) else str(g.name)
            out.append(Device(i, tok, name, int(total), tuple(g.compute_capability)))
    return out


def _from_nvidia_smi(allowed) -> list[Device]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        text = subprocess.run(
            [
                exe,
                "--query-gpu=index,uuid,name,memory.total,compute_cap",
                "--format=csv,noheader,nounits",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [[c.strip() for c in line.split(",")] for line in text.splitlines() if line.strip()]
    out = []
    for index, uuid, name, mem_mib, cc in rows:
        if allowed is not None and index not in allowed and uuid not in allowed:
            continue
        tok = index if allowed is None or index in allowed else uuid
        out.append((tok, name, int(float(mem_mib)) * 2**20, _cc(cc)))
    if allowed is not None:  # runtime order follows CUDA_VISIBLE_DEVICES order
        out.sort(key=lambda r: allowed.index(r[0]))
    return [Device(i, *r) for i, r in enumerate(out)]


def discover_devices(env=None) -> list[Device]:
    """The GPUs this process may use (possibly none). See the module docstring."""
    allowed = allowed_tokens(env)
    topo = virtual_topology(env)
    if topo is not None:
        return _from_virtual(topo, allowed)
    if allowed == []:
        return []
    for probe in (_from_cupy, _from_numba):
        found = probe(allowed)
        if found:
            return found
    return _from_nvidia_smi(allowed)


def select_devices(devices, available: list[Device] | None = None) -> list[Device] | None:
    """Resolve a ``devices=`` argument: ``None`` (no multi-device run), ``"all"``, an int
    id, a list of ids or a string ``"0,2"``. Ids are this process's ordinals.

    Raises
    ------
    DeviceSelectionError
        An id that is not there (the message lists the valid ones), or no GPU at all.
    """
    if devices is None:
        return None
    available = discover_devices() if available is None else available
    valid = [d.index for d in available]
    if isinstance(devices, str) and devices.strip().lower() == "all":
        if not available:
            raise DeviceSelectionError(
                "devices='all' but no GPU is visible (set BIOACCEL_VIRTUAL_GPUS=N to use "
                "virtual GPUs on the CPU)"
            )
        return list(available)
    if isinstance(devices, bool):
        raise DeviceSelectionError(f"devices={devices!r}: expected None, 'all', an id or ids")
    if isinstance(devices, int):
        wanted = [devices]
    elif isinstance(devices, str):
        try:
            wanted = [int(t) for t in devices.split(",") if t.strip()]
        except ValueError:
            raise DeviceSelectionError(
                f"devices={devices!r}: expected 'all' or comma-separated ids such as '0,2'; "
                f"valid ids: {valid}"
            ) from None
    else:
        wanted = list(devices)
    if not wanted:
        raise DeviceSelectionError(f"devices={devices!r} selects no device; valid ids: {valid}")
    bad = [w for w in wanted if isinstance(w, bool) or not isinstance(w, int) or w not in valid]
    if bad:
        raise DeviceSelectionError(
            f"devices={devices!r}: no GPU with id(s) {bad}; valid ids: {valid}"
            if valid
            else f"devices={devices!r}: no GPU is visible here"
        )
    if len(set(wanted)) != len(wanted):
        raise DeviceSelectionError(f"devices={devices!r} names a device twice")
    return [available[valid.index(w)] for w in wanted]
