"""Progress of counted work (a sweep's runs, a grid's points being checked): a bar with ETA on a
terminal; in a log (stderr not a terminal), a line every few seconds; nothing when not enabled."""

from __future__ import annotations

import sys
import time

#: In a log, the least time between two progress lines, seconds.
LOG_EVERY_S = 2.0


class Bar:
    """``total`` things to do, said as ``unit`` (``"runs done"``, ``"points checked"``).

    ``quiet_s``: in a log, say nothing before this many seconds have passed (so that work done in a
    moment leaves no line); 0 says the first step at once."""

    def __init__(self, label: str, total: int, enabled: bool, note: str = "", unit: str = "runs done", quiet_s=0.0):
        from rich.console import Console

        console = Console(stderr=True)
        self.label, self.total, self.note, self.unit = label, total, note, unit
        self.log = enabled and not console.is_terminal
        self.last_line = time.monotonic() - LOG_EVERY_S + quiet_s if quiet_s else 0.0
        self.said = False
        self.done = 0
        self.progress = None
        if enabled and console.is_terminal and total:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(unit.split()[0]),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(f"{label}{note}", total=total)

    def update(self, done: int, partial: float = 0.0) -> None:
        """``done`` finished; ``partial`` more in fractions of things under way."""
        self.done = done
        if self.progress is not None:
            self.progress.update(self.task, completed=min(done + partial, self.total))
            return
        now = time.monotonic()
        last = done == self.total and self.said
        if self.log and done and (now - self.last_line > LOG_EVERY_S or last):
            self.last_line, self.said = now, True
            print(f"{self.label}: {done:,}/{self.total:,} {self.unit}{self.note}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
