"""SIGTERM heard as Ctrl-C: a command stopped by ``kill`` (or a batch system's time limit) stops as an
interrupted one does, keeping what it finished (a sweep's committed runs, the database closed and
checkpointed, no ``.wal`` left beside it; the emulator's namespaces gone) and saying so, exit 130."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While in it, SIGTERM raises KeyboardInterrupt in the main thread (the core looks for signals while
    it runs, so a run stops at its next progress report). Elsewhere than the main thread, nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
