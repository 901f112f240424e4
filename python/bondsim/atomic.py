"""Outputs written whole or not at all: the one place every writer of a file a user asked for goes through
(``run --out``, ``report --out``/``--png``, ``runs export``, ``validate``'s and the league's CSV, ``plot``,
``reproduce --out``: its CSVs, figures and ``summary.md``).

Each file is written under a temporary name beside its target (same directory, so same file system:
``os.replace`` is then a rename, atomic on POSIX) and renamed into place only once every file of the
output is complete, so that a failure (a full disk, Ctrl-C, an error in the writer) leaves an earlier
output in that place as it was and no partial file: the temporary files are removed, and directories
made for the output are removed again while empty. What is left to chance: a failure between two of the
final renames (which need no space) would leave the output half-replaced, and a SIGKILL leaves the
temporary files (hidden: ``.NAME.part-XXXXXXXXXXXXXXXX.SUFFIX``). Nothing is fsync'd: this guards against
the writer failing, not against the machine losing power.

An output of several files written in several places (a reproduction: its tables, its figures through
:mod:`bondsim.plots`, its summary) is one output: inside :func:`staged` (or a function decorated with
:func:`whole`), :func:`write` and an inner :func:`staged` join the block's files, which go into place together
when the outermost block ends.

An ``OSError`` raised while writing is raised again naming the target (not the temporary name) and
keeping its cause (``errno``, ``strerror``: e.g. "No space left on device"), what the command line's
``write_error`` turns into its one line.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

#: What marks a temporary name (between the target's stem and suffix).
PART = ".part-"


class Staged:
    """The files of one output, written under temporary names; renamed into place by :func:`staged` once all
    are complete."""

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []  # (temporary, target), in the order written
        self._removals: list[Path] = []
        self._made: list[Path] = []  # directories made for the output, outermost first

    def write(self, target: str | Path, writer: Callable[[Path], object]) -> Path:
        """Calls ``writer(temporary)`` to write what goes to ``target``; returns ``target``."""
        target = Path(target)
        self._make_dir(target.parent)
        # The suffix stays last: writers that pick a format by it (matplotlib, pandas' compression) pick
        # the target's. Created here with O_EXCL (no other file is taken over) and the umask's mode, as
        # open(..., "w") would give the target; the writer then opens it by name.
        for k, (earlier, same) in enumerate(self._files):
            if same == target:  # written again within the output: the last writing counts
                with contextlib.suppress(OSError):
                    earlier.unlink()
                del self._files[k]
                break
        temp = target.with_name(f".{target.stem}{PART}{secrets.token_hex(8)}{target.suffix}")
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except OSError as exc:
            raise _naming(exc, target) from exc
        self._files.append((temp, target))
        try:
            writer(temp)
        except OSError as exc:
            raise _naming(exc, target) from exc
        return target

    def write_text(self, target: str | Path, text: str) -> Path:
        """Writes ``text`` (UTF-8) to ``target``."""
        return self.write(target, lambda temp: temp.write_text(text, encoding="utf-8"))

    def read_text(self, target: str | Path) -> str:
        """The text written to ``target`` in this output so far (it is not in place until the output is)."""
        target = Path(target)
        for temp, same in reversed(self._files):
            if same == target:
                return temp.read_text(encoding="utf-8")
        raise FileNotFoundError(f"{target} is not written in this output")

    def remove(self, target: str | Path) -> None:
        """Removes ``target`` (if it is there) once the output is in place: a file of an earlier output that
        this one does not have."""
        self._removals.append(Path(target))

    def _make_dir(self, directory: Path) -> None:
        missing = []
        while not directory.exists() and directory != directory.parent:
            missing.append(directory)
            directory = directory.parent
        if missing:
            missing[0].mkdir(parents=True, exist_ok=True)
            self._made += [d for d in reversed(missing) if d not in self._made]

    def _commit(self) -> None:
        for k, (temp, target) in enumerate(self._files):
            try:
                os.replace(temp, target)
            except OSError as exc:
                self._files = self._files[k:]
                self._discard()
                raise _naming(exc, target) from exc
        for path in self._removals:
            path.unlink(missing_ok=True)

    def _discard(self) -> None:
        for temp, _ in self._files:
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
        for directory in reversed(self._made):
            with contextlib.suppress(OSError):  # not empty: something else was put there meanwhile
                directory.rmdir()


def _naming(exc: OSError, target: Path) -> OSError:
    """``exc`` naming ``target`` as the file it failed on (an ``OSError`` of the same subclass: the constructor
    picks it by ``errno``)."""
    return OSError(exc.errno, exc.strerror or str(exc), str(target))


#: The output being written (the outermost :func:`staged` block), which inner writers join.
_current: contextvars.ContextVar[Staged | None] = contextvars.ContextVar("bondsim_staged", default=None)


@contextlib.contextmanager
def staged() -> Iterator[Staged]:
    """Files written in the block (:meth:`Staged.write`) go into place when it ends, all of them; if it raises
    (anything, Ctrl-C too), none does and no temporary file is left. Within another such block it is part of
    that one's output: its files go into place with the outer block's."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    files = Staged()
    token = _current.set(files)
    try:
        yield files
    except BaseException:
        files._discard()
        raise
    finally:
        _current.reset(token)
    files._commit()


def write(target: str | Path, writer: Callable[[Path], object]) -> Path:
    """One file written whole or not at all: ``writer(temporary)`` writes it; returns ``target``. Within a
    :func:`staged` block, a file of that block's output."""
    with staged() as files:
        files.write(target, writer)
    return Path(target)


def write_text(target: str | Path, text: str) -> Path:
    """:func:`write` of ``text`` (UTF-8)."""
    with staged() as files:
        return files.write_text(target, text)


def write_csv(frame: Any, target: str | Path) -> Path:
    """:func:`write` of a DataFrame as CSV, without its index."""
    return write(target, lambda temp: frame.to_csv(temp, index=False))


F = TypeVar("F", bound=Callable[..., Any])


def whole(function: F) -> F:
    """Decorates a function that writes an output of several files (a reproduction): what it writes through
    this module goes into place when it returns, and nothing if it raises."""

    @functools.wraps(function)
    def writing(*args: Any, **kwargs: Any) -> Any:
        with staged():
            return function(*args, **kwargs)

    return writing  # type: ignore[return-value]
