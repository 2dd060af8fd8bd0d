"""How much memory this process may still take: the one place that asks the system."""

from __future__ import annotations

import os


def available_bytes() -> int | None:
    """Memory available for new allocations without swapping (``MemAvailable`` of
    /proc/meminfo, else free pages by sysconf); None when the system does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def gib(nbytes: float) -> str:
    """``nbytes`` for a message: '3.2 GiB'."""
    return f"{nbytes / 2**30:.1f} GiB"
