"""Run a pairwise kernel on one backend or, with ``devices=``, tile by tile on several GPUs.

The one place where an operation (``align_scores``, ``edit_distances``, ...) turns its
``backend``/``devices`` arguments into work: :func:`~bioaccel.backends.get_backend` for a
single device, else :func:`~bioaccel.backends.backend_for_devices` and the multi-GPU
runner of :mod:`bioaccel.devices._multigpu` (which is handed the engine: it sits beside the
backends, not above them).
"""

from __future__ import annotations

from ..backends import backend_for_devices, get_backend
from ..devices import pairwise_on_devices, select_devices


def pairwise(
    queries,
    targets,
    symmetric: bool,
    *,
    operation: str,
    kernel,
    dtype,
    backend: str = "auto",
    devices=None,
    threads: int = 0,
):
    """``kernel(engine, queries, targets, symmetric, threads)`` on ``backend``, or the same
    kernel on tiles of the pair space spread over ``devices`` (equal results)."""
    chosen = select_devices(devices)
    if chosen is None:
        return kernel(get_backend(backend, operation), queries, targets, symmetric, threads)
    engine = backend_for_devices(chosen, backend, operation)
    return pairwise_on_devices(queries, targets, symmetric, chosen, engine, kernel, dtype, threads)
