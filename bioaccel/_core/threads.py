"""The one check of a ``threads`` argument, for every entry point (Python and command line).

``0`` means all cores; ``1`` .. :func:`max_threads` (:data:`MAX_THREADS_PER_CPU` x the
logical CPUs, as ``os.cpu_count()``) are used as given: more threads than cores only
oversubscribe them, and a team of 100,000 OpenMP threads crashes the process. Anything
else -- negative, above the cap, ``True``/``False``, a float or a string -- raises
:class:`~bioaccel.errors.ThreadCountError` (a ``ValueError``) naming the value and the
range. The C++ core applies the same rule (``resolve_threads``) and throws
``std::invalid_argument`` should a value ever reach it unchecked.

And the one meaning of ``threads=0``: :func:`all_cores`, the CPUs this process may run on
(its affinity mask: ``taskset``, a cgroup cpuset, Slurm), not every CPU of the machine.
:func:`resolve_threads` gives the team a ``threads`` value starts; every Python path that
sizes work by the team (the accurate mode's memory check, the multi-device runner) uses it,
and the C++ core is handed the same number (:func:`bioaccel._core.load_native` passes it
on), so it never decides on its own.
"""

from __future__ import annotations

import numbers
import os

from ..errors import ThreadCountError

#: threads per logical CPU at most
MAX_THREADS_PER_CPU = 4


def max_threads() -> int:
    """The largest ``threads`` value accepted here."""
    return MAX_THREADS_PER_CPU * (os.cpu_count() or 1)


def threads_range() -> str:
    """What a ``threads`` value may be, in the words of every message about one."""
    return (
        f"expected an integer from 0 (all cores) to {max_threads()} "
        f"({MAX_THREADS_PER_CPU} x {os.cpu_count() or 1} CPUs)"
    )


def all_cores() -> int:
    """The team ``threads=0`` means: the CPUs this process may run on (its affinity mask),
    ``os.cpu_count()`` where the system has none."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def resolve_threads(threads, name: str = "threads") -> int:
    """The team ``threads`` starts: :func:`check_threads`, then 0 as :func:`all_cores`.

    >>> resolve_threads(3), resolve_threads(0) == all_cores()
    (3, True)
    """
    return check_threads(threads, name) or all_cores()


def check_threads(threads, name: str = "threads") -> int:
    """``threads`` as an int in 0 .. :func:`max_threads`, else :class:`ThreadCountError`
    (a value that is not an integer is named as such, one outside the range as out of it).

    >>> check_threads(0)
    0
    """
    if not isinstance(threads, numbers.Integral) or isinstance(threads, bool):
        raise ThreadCountError(f"{name}={threads!r} is not an integer: {threads_range()}")
    if not 0 <= int(threads) <= max_threads():
        raise ThreadCountError(f"{name}={threads!r} is out of range: {threads_range()}")
    return int(threads)
