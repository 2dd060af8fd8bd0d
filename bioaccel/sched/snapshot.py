"""The one schema of what ``bioaccel gpus --json`` prints, whoever arbitrates.

Both the file-based arbiter (:meth:`GpuBroker.snapshot <bioaccel.sched.GpuBroker.snapshot>`)
and the arbiter service (:mod:`.arbiterd`) answer with this object, and ``bioaccel gpus``
renders nothing but it::

    {"mode": "service" | "private" | "shared-folder" | "slurm",
     "run_dir": str | null, "run_dir_owner": str | null, "socket": str | null,
     "slots_per_gpu": int, "policy": str, "max_waiting": int, "shares_file": str | null,
     "time": float, "hint": str | null, "warnings": [str],
     "devices": [{"index", "visible_id", "token", "name", "memory_gb", "virtual",
                  "held_slots", "holders": [HOLDER]}],
     "usage": {account: decayed GPU-seconds},
     "queue": [{"id", "user", "uid", "account", "priority", "gpus", "slots", "mem_gb", "pid",
                "host", "submit_time", "waited_s", "predicted_s", "label", "planned",
                "lapsed"}]}

    HOLDER = {"lease", "user", "uid", "account", "pid", "pid_alive", "held_by", "verified",
              "host", "since", "held_s", "age_s", "label", "mem_gb", "slots", "gpu",
              "state", "processes"}

``state`` is ``"held"`` or, for the service, ``"ending"`` (its connection closed or it was
released, and processes of its job still run: they are being ended) or ``"recovered"``
(found alive after the service restarted); ``processes`` lists the job's live processes
(``{"pid", "how", "cmd"}``, ``how`` saying why it counts: ``job``, ``descendant``,
``session``, ``group``, ``environment``) where the service tracks them, else ``[]``.
Every string is as given (labels may hold any text; ``gpus`` escapes control characters
when it prints them).
"""

from __future__ import annotations

HOLDER_KEYS = (
    "lease",
    "user",
    "uid",
    "account",
    "pid",
    "pid_alive",
    "held_by",
    "verified",
    "host",
    "since",
    "held_s",
    "age_s",
    "label",
    "mem_gb",
    "slots",
    "gpu",
    "state",
    "processes",
)
QUEUE_KEYS = (
    "id",
    "user",
    "uid",
    "account",
    "priority",
    "gpus",
    "slots",
    "mem_gb",
    "pid",
    "host",
    "submit_time",
    "waited_s",
    "predicted_s",
    "label",
    "planned",
    "lapsed",
)


def holder(token: str, h: dict) -> dict:
    """A holder entry in the schema (missing keys get their empty value)."""
    out = {k: h.get(k) for k in HOLDER_KEYS}
    out["gpu"] = token
    out["age_s"] = h.get("held_s")
    out["held_by"] = list(h.get("held_by") or [])
    out["processes"] = list(h.get("processes") or [])
    out["state"] = h.get("state") or "held"
    if out["pid_alive"] is None:
        out["pid_alive"] = bool(out["pid"])
    return out


def device(index: int, d: dict, holders: list[dict], slots_per_gpu: int) -> dict:
    token = d["token"]
    hs = [holder(token, h) for h in holders]
    return {
        "index": index,
        "visible_id": token.split("-", 1)[1],
        "token": token,
        "name": d.get("name", ""),
        "memory_gb": d["memory_gb"],
        "virtual": token.startswith("vgpu-"),
        "held_slots": sum(len(h["slots"]) for h in hs),
        "holders": hs,
    }


def queue_entry(q: dict) -> dict:
    return {k: q.get(k) for k in QUEUE_KEYS}


def make(
    *,
    mode: str,
    run_dir,
    run_dir_owner,
    socket,
    slots_per_gpu: int,
    policy: str,
    max_waiting: int,
    shares_file,
    time: float,
    hint,
    warnings: list[str],
    devices: list[dict],
    holders: dict[str, list[dict]],
    usage: dict,
    queue: list[dict],
) -> dict:
    """The snapshot object (see the module)."""
    return {
        "mode": mode,
        "run_dir": None if run_dir is None else str(run_dir),
        "run_dir_owner": run_dir_owner,
        "socket": None if socket is None else str(socket),
        "slots_per_gpu": slots_per_gpu,
        "policy": policy,
        "max_waiting": max_waiting,
        "shares_file": None if shares_file is None else str(shares_file),
        "time": time,
        "hint": hint,
        "warnings": list(warnings),
        "devices": [
            device(k, d, holders.get(d["token"], []), slots_per_gpu) for k, d in enumerate(devices)
        ],
        "usage": dict(usage),
        "queue": [queue_entry(q) for q in queue],
    }
