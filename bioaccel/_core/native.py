"""The one loader of the compiled core ``bioaccel._native`` (csrc/, built by setup.py), and
the one policy for a missing core: it is part of every install, so everything that needs it
calls :func:`load_native`, which raises :class:`~bioaccel.errors.NativeCoreError` (an
ImportError and a BackendUnavailableError) with the reason and the fix. Nothing falls back
to a Python path silently; only ``backend="reference"`` computes without the core. Loading
also hands the core the one meaning of ``threads=0`` (:mod:`bioaccel._core.threads`).
"""

from __future__ import annotations

from ..errors import NativeCoreError
from .threads import all_cores

#: the team ``threads=0`` means, as last handed to the core (None: not yet)
_all_cores_sent: int | None = None


def load_native():
    """Import ``bioaccel._native``; raise :class:`NativeCoreError` with the reason and the
    fix when it is missing (a source checkout that was never built, or a build for another
    Python)."""
    try:
        from .. import _native
    except ImportError as exc:
        raise NativeCoreError(
            f"bioaccel's compiled core (bioaccel._native) cannot be loaded: {exc}; "
            "build it with `pip install .` (or `python setup.py build_ext "
            "--inplace` in a checkout)"
        ) from exc
    _send_all_cores(_native)
    return _native


def _send_all_cores(native) -> None:
    """Hand the core the team ``threads=0`` means (:func:`bioaccel._core.threads.all_cores`,
    affinity-aware), again whenever the affinity changed: the core never decides it."""
    global _all_cores_sent
    team = all_cores()
    if team != _all_cores_sent:
        native.set_all_cores_threads(team)
        _all_cores_sent = team
