"""Progress of long work on stderr, one reporter for all of it: a sweep's runs, a grid's points being
checked, a run's packets, an emulation's requests. On a terminal a bar with the time elapsed and left;
in a log (stderr not a terminal) a line every few seconds; nothing when not enabled, nor before
``after_s`` seconds have passed (work done in a moment leaves no trace)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

#: In a log, the least time between two progress lines, seconds.
LOG_EVERY_S = 2.0


class Bar:
    """``total`` things to do, said as ``unit`` (``"runs done"``, ``"points checked"``): its first word
    names them on the bar.

    ``every_s``: in a log, the least time between two lines (default :data:`LOG_EVERY_S`). ``note``: said
    after the count (``" (3 already stored)"``). ``detail``: for work whose reports carry
    a value besides the count (a run's simulated time), the text said of it. A ``Bar`` is also the
    core's progress callback, ``bar(done, total, value)`` (:func:`bondsim.api.run`'s ``progress``)."""

    def __init__(
        self,
        label: str,
        total: int,
        enabled: bool,
        note: str = "",
        unit: str = "runs done",
        *,
        after_s: float = 0.0,
        every_s: float | None = None,
        detail: Callable[[float], str] | None = None,
    ):
        self.label, self.total, self.note, self.unit, self.detail = label, total, note, unit, detail
        self.enabled, self.after_s = enabled, after_s
        self.every_s = LOG_EVERY_S if every_s is None else every_s
        self.start = time.monotonic()
        self.terminal: bool | None = None
        self.last_line: float | None = None  # when a line was last said in a log, and of how many done
        self.said: int | None = None
        self.done = 0
        self.progress = None
        if enabled and total and not after_s and self._on_terminal():
            self._bar(0, "")  # the bar at once: the first things may take long

    def __call__(self, done: int, total: int, value: float) -> None:
        self.total = total
        self.update(done, value=value)

    def update(self, done: int, partial: float = 0.0, value: float | None = None) -> None:
        """``done`` finished; ``partial`` more in fractions of things under way; ``value`` for ``detail``."""
        self.done = done
        now = time.monotonic()
        if not self.enabled or now - self.start < self.after_s:
            return
        detail = self.detail(value) if self.detail is not None and value is not None else ""
        if self._on_terminal():
            self._bar(min(done + partial, self.total), detail)
            return
        # the first thing done at once; then a line every `every_s` (also while nothing is done: alive);
        # the end once more, if anything was said before it
        first = done > 0 and not self.said
        due = now - (self.last_line or self.start) >= self.every_s
        finished = done == self.total and self.said not in (None, done)
        if first or due or finished:
            self.last_line, self.said = now, done
            count = f"{done:,}/{self.total:,} {self.unit}{detail}{self.note}"
            print(f"{self.label}: {count}, {now - self.start:,.0f} s elapsed", file=sys.stderr, flush=True)

    def _on_terminal(self) -> bool:
        if self.terminal is None:  # asked once, when first needed (rich is loaded then)
            from rich.console import Console

            self.terminal = Console(stderr=True).is_terminal
        return self.terminal

    def _bar(self, completed: float, detail: str) -> None:
        if self.progress is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(bar_width=20),
                TextColumn("{task.fields[said]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(f"{self.label}{self.note}", total=self.total, said="")
        said = f"{self._count(int(completed))} {self.unit.split()[0]}{detail}, {time.monotonic() - self.start:,.0f} s"
        self.progress.update(self.task, completed=completed, total=self.total, said=said)

    def _count(self, done: int) -> str:
        """``done`` of the total, as a share once the numbers grow long (a run's millions of packets)."""
        return f"{done:,}/{self.total:,}" if self.total < 100_000 else f"{done / self.total:.0%} of {self.total:,}"

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
