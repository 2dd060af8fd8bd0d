"""Backend registry.

Every backend turns an aligned DNA tile into integer pair counts (see
:mod:`bioaccel.distances._dna`); the distances are then computed once, in NumPy, so all
backends agree bit for bit.

``backend="auto"`` takes the first available of :data:`AUTO_ORDER` -- ``cupy`` and
``numba-cuda`` only with a real CUDA device (never the simulator), then ``cpu`` (the
compiled OpenMP core), then ``reference`` -- and logs its choice once. A backend named
explicitly that cannot run raises :class:`~bioaccel.errors.BackendUnavailableError`
saying why; there is no silent fallback.
"""

from __future__ import annotations

import logging

from ..errors import BackendUnavailableError
from .base import Backend, DnaData

log = logging.getLogger("bioaccel")

#: Resolution order of ``backend="auto"``.
AUTO_ORDER = ("cupy", "numba-cuda", "cpu", "reference")

_instances: dict[str, Backend] = {}
_auto_logged: set[tuple[str, str]] = set()


def _make(name: str) -> Backend:
    if name == "reference":
        from .reference import ReferenceBackend

        return ReferenceBackend()
    if name == "cpu":
        from .cpu import CpuBackend

        return CpuBackend()
    if name == "numba-cuda":
        from .numba._backend import NumbaCudaBackend

        return NumbaCudaBackend()
    if name == "cupy":
        from .cupy._backend import CupyBackend

        return CupyBackend()
    raise BackendUnavailableError(
        f"unknown backend {name!r}; expected 'auto' or one of {list(AUTO_ORDER)}"
    )


def backend_names() -> tuple[str, ...]:
    return AUTO_ORDER


def get_backend(name: str = "auto", operation: str = "dna_counts") -> Backend:
    """Return a ready backend that implements ``operation``.

    ``operation`` is one of ``dna_counts``, ``align_scores``, ``edit_distances``,
    ``edit_pairs`` (listed pairs with a bound: the neighbours' verification),
    ``lcs_lengths``, ``neighbor_joining``:
    ``"auto"`` takes the first available backend of :data:`AUTO_ORDER` that has kernels
    for it.

    Raises
    ------
    BackendUnavailableError
        ``name`` is unknown, names a backend that cannot run here, or one without kernels
        for ``operation`` (with the reason).
    """
    key = str(name).lower().replace("_", "-")
    if key == "numba":
        key = "numba-cuda"
    if key == "auto":
        for candidate in AUTO_ORDER:
            backend = _instances.get(candidate) or _make(candidate)
            _instances[candidate] = backend
            allowed = (
                backend.operations if backend.auto_operations is None else backend.auto_operations
            )
            if operation in allowed and backend.unavailable_reason(for_auto=True) is None:
                if (candidate, operation) not in _auto_logged:
                    log.info("bioaccel: backend 'auto' resolved to %r for %s", candidate, operation)
                    _auto_logged.add((candidate, operation))
                return backend
        raise BackendUnavailableError("no backend available")  # reference always is
    backend = _instances.get(key) or _make(key)
    _instances[key] = backend
    reason = backend.unavailable_reason(for_auto=False)
    if reason is not None:
        raise BackendUnavailableError(f"backend {key!r} is unavailable: {reason}")
    if operation not in backend.operations:
        raise BackendUnavailableError(
            f"backend {key!r} has no {operation} kernels yet; backends that do: "
            f"{[n for n in AUTO_ORDER if operation in (_instances.get(n) or _make(n)).operations]}"
        )
    return backend


def backend_for_devices(devices, name: str = "auto", operation: str = "dna_counts") -> Backend:
    """The backend that runs ``operation`` on ``devices`` (objects with a ``virtual`` flag,
    such as :class:`bioaccel.sched.Device`): the CPU core for virtual GPUs, a GPU backend
    for real ones.

    Raises
    ------
    BackendUnavailableError
        A GPU backend named for virtual GPUs, virtual and real GPUs mixed, or a CPU
        backend named for real GPUs.
    """
    key = str(name).lower()
    if all(d.virtual for d in devices):
        if key not in ("auto", "cpu", "reference"):
            raise BackendUnavailableError(
                f"virtual GPUs run the CPU backend; backend {name!r} needs real devices"
            )
        return get_backend("cpu" if key == "auto" else key, operation)
    if any(d.virtual for d in devices):
        raise BackendUnavailableError("devices= mixes virtual and real GPUs")
    engine = get_backend(name, operation)
    if engine.name not in ("cupy", "numba-cuda"):
        raise BackendUnavailableError(
            f"devices= names GPUs but backend {engine.name!r} runs on the CPU; use backend="
            "'auto', 'cupy' or 'numba-cuda', or drop devices="
        )
    return engine


def available_backends() -> dict[str, str | None]:
    """Map each backend name to None (available) or the reason it is not."""
    out = {}
    for name in AUTO_ORDER:
        backend = _instances.get(name) or _make(name)
        _instances[name] = backend
        out[name] = backend.unavailable_reason(for_auto=False)
    return out


__all__ = [
    "AUTO_ORDER",
    "Backend",
    "DnaData",
    "available_backends",
    "backend_for_devices",
    "backend_names",
    "get_backend",
]
