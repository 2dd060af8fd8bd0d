"""The one loader of the compiled core ``bioaccel._native`` (csrc/, built by setup.py), and
the one policy for a missing core: it is part of every install, so everything that needs it
calls :func:`load_native`, which raises :class:`~bioaccel.errors.NativeCoreError` (an
ImportError and a BackendUnavailableError) with the reason and the fix. Nothing falls back
to a Python path silently; only ``backend="reference"`` computes without the core.
"""

from __future__ import annotations

from ..errors import NativeCoreError


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
    return _native
