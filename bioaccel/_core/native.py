"""The one loader of the compiled core ``bioaccel._native`` (csrc/, built by setup.py)."""

from __future__ import annotations


def load_native():
    """Import ``bioaccel._native``; raise ImportError with the reason and the fix when it is
    missing (a source checkout that was never built, or a build for another Python)."""
    try:
        from .. import _native
    except ImportError as exc:
        raise ImportError(
            f"bioaccel's compiled core (bioaccel._native) cannot be loaded: {exc}; "
            "build it with `pip install .` (or `python setup.py build_ext "
            "--inplace` in a checkout)"
        ) from exc
    return _native
