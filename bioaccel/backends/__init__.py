"""Backend registry, and the engines behind it.

Every backend turns an aligned DNA tile into integer pair counts (see
:mod:`bioaccel.distances`); the distances are then computed once, in NumPy, so all
backends agree bit for bit.

``backend="auto"`` takes the first available of :data:`AUTO_ORDER` -- ``cupy`` and
``numba-cuda`` only with a real CUDA device (never the simulator), then ``cpu`` (the
compiled OpenMP core), then ``reference`` -- and logs its choice once. A backend named
explicitly that cannot run raises :class:`~bioaccel.errors.BackendUnavailableError`
saying why; there is no silent fallback.

- ``base``: what a backend is (:class:`Backend`) and the input it receives;
- ``reference``: the NumPy reference, one pair at a time, straight from the definitions;
- ``cpu``: the compiled C++ core (csrc/), OpenMP over pair tiles;
- ``numba`` and ``cupy``: the GPU backends (subpackages, loaded on first use);
- ``bitmasks``: match masks of the bit-parallel kernels, shared by both GPU backends;
- ``nj_array``: neighbour joining written once against an array module (NumPy or CuPy);
- ``msa_batch``: batches of profile pairs packed for the GPU stages of the MSA DP;
- ``posteriors``: pair-HMM posteriors (the accurate MSA mode) on each backend.
"""

from __future__ import annotations

import logging

from .._core import lazy_getattr
from ..errors import BackendUnavailableError
from .base import Backend, DnaData

log = logging.getLogger("bioaccel")

#: Resolution order of ``backend="auto"``.
AUTO_ORDER = ("cupy", "numba-cuda", "cpu", "reference")

#: ``auto``'s size rules, by operation: the input size from which it may take a GPU backend
#: (below it the C++ core wins), or None where it always runs the C++ core (the GPU kernels
#: run when named). Operations not listed may go to a GPU at any size.
AUTO_GPU_FROM: dict[str, int | None] = {
    # Measured on an NVIDIA H200 beside its host's 16 cores (scripts/gpu-check.sh, 2026-12-04):
    # the C++ core won each of these, so `auto` keeps them there and the GPU runs them when
    # named. K80 matrices of 10,000 x 1,500 sites: cpu 0.97 s, cupy 2.17 s, numba-cuda 3.03 s
    # (the n^2 result crosses the bus); NJ of 4,000 taxa: cpu 2.84 s, cupy 4.87 s (one
    # argmin round trip per join); the neighbours' verification of 274,771 candidates
    # (200,000 amplicons, d = 1): cpu 1.45 s, cupy 3.55 s, numba-cuda 3.17 s.
    "dna_counts": None,
    "neighbor_joining": None,
    "edit_pairs": None,
    # the MSA engine's progressive stage and the accurate mode's posteriors: C++ on all threads
    "msa_profile_dp": None,
    "pair_posteriors": None,
    # the C++ core's alone: the float32 triangle's NJ and alignments with traceback
    "neighbor_joining_low_memory": None,
    "align_traceback": None,
    # MinHash neighbours: the C++ k-mer rows
    "kmer_neighbors": None,
}

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


def _key(name) -> str:
    key = str(name).lower().replace("_", "-")
    return "numba-cuda" if key == "numba" else key


def _instance(name: str) -> Backend:
    backend = _instances.get(name) or _make(name)
    _instances[name] = backend
    return backend


def auto_backend(operation: str, size: int | None = None, gpu_only: bool = False) -> Backend:
    """The backend ``backend="auto"`` picks for ``operation`` on an input of ``size`` (taxa,
    sequences; None: unknown): the one ``auto`` resolver. The first available backend of
    :data:`AUTO_ORDER` with kernels for ``operation`` (and not excluded from ``auto`` for
    it), a GPU backend only from :data:`AUTO_GPU_FROM`'s size on; where that rule is None,
    the ``cpu`` backend (the C++ core runs the operation). ``gpu_only`` (``devices=`` naming
    real GPUs): the first such GPU backend, whatever the size rule. Logged once per choice."""
    gpu_from = AUTO_GPU_FROM.get(operation, 0)
    chosen: Backend | None = None
    if gpu_from is None and not gpu_only:
        chosen = _instance("cpu")
    else:
        gpu_ok = gpu_only or gpu_from is None or size is None or size >= gpu_from
        for candidate in AUTO_ORDER:
            backend = _instance(candidate)
            allowed = (
                backend.operations if backend.auto_operations is None else backend.auto_operations
            )
            if (backend.on_gpu and not gpu_ok) or (gpu_only and not backend.on_gpu):
                continue
            if operation in allowed and backend.unavailable_reason(for_auto=True) is None:
                chosen = backend
                break
    if chosen is None:
        what = (
            f"devices= names GPUs but no GPU backend with {operation} kernels can run here"
            if gpu_only
            else f"no backend that can run here has {operation} kernels"
        )
        raise BackendUnavailableError(
            f"{what}; backends that have them: {list(backends_with(operation)) or 'none'}"
        )
    if (chosen.name, operation) not in _auto_logged:
        log.info("bioaccel: backend 'auto' resolved to %r for %s", chosen.name, operation)
        _auto_logged.add((chosen.name, operation))
    return chosen


def backends_with(operation: str) -> tuple[str, ...]:
    """The backends that have kernels for ``operation``, in :data:`AUTO_ORDER` (whether or
    not they can run here): what callers name in a message instead of restating it."""
    return tuple(n for n in AUTO_ORDER if operation in _instance(n).operations)


def resolve_backend_name(name: str, operation: str, size: int | None = None) -> str:
    """The name of the backend ``name`` means for ``operation`` (``auto`` resolved by
    :func:`auto_backend`, ``numba`` as ``numba-cuda``), for callers that run the C++ core
    themselves when it is ``cpu``; an unknown name is refused by :func:`get_backend` later."""
    key = _key(name)
    return auto_backend(operation, size).name if key == "auto" else key


def get_backend(
    name: str = "auto", operation: str = "dna_counts", size: int | None = None
) -> Backend:
    """Return a ready backend that implements ``operation``.

    ``operation`` is one of ``dna_counts``, ``align_scores``, ``edit_distances``,
    ``edit_pairs`` (listed pairs with a bound: the neighbours' verification),
    ``lcs_lengths``, ``neighbor_joining``, ``msa_profile_dp``, ``pair_posteriors``:
    ``"auto"`` is :func:`auto_backend` (``size``: the input's size, for its size rules).

    Raises
    ------
    BackendUnavailableError
        ``name`` is unknown, names a backend that cannot run here, or one without kernels
        for ``operation`` (with the reason).
    """
    key = _key(name)
    if key == "auto":
        return auto_backend(operation, size)
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
    such as :class:`bioaccel.devices.Device`): the CPU core for virtual GPUs, a GPU backend
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
    if key == "auto":  # devices= asks for these GPUs, whatever AUTO_GPU_FROM says
        return auto_backend(operation, gpu_only=True)
    engine = get_backend(name, operation)
    if not engine.on_gpu:
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
    "AUTO_GPU_FROM",
    "auto_backend",
    "available_backends",
    "backend_for_devices",
    "backends_with",
    "get_backend",
    "profile_dp_batch",
    "resolve_backend_name",
]

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "profile_dp_batch": (".cupy._msa", "profile_dp_batch"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)
