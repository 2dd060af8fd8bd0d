"""A progress bar on stderr for long runs; silent when stderr is not a terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress_bar(
    description: str, enabled: bool | None = None
) -> Iterator[Callable[[int, int], None]]:
    """Yield an ``update(done, total)`` callback drawing a rich progress bar with ETA.

    The bar appears at the first ``update``, so it always has a total and an ETA; a
    computation that never reports its progress shows no bar at all (never one that only
    spins).
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    bar = Progress(*columns, console=Console(stderr=True), transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(description, total=total)
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if task is not None:
            bar.stop()
