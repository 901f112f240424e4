"""What every ``bondsim`` command shares: the consoles, the help's formatter, the options several
commands take, argparse types that refuse bad values as the arguments are read, and the checks that
an output can be written before anything runs."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim._core import BondsimError

if TYPE_CHECKING:
    from rich.console import Console

#: The results database a command uses when not given ``--db`` (``bondsim.store.DEFAULT_DB``, named
#: here too so that building the command line loads no database library).
DEFAULT_DB = Path("bondsim.duckdb")


class LazyConsole:
    """rich's ``Console``, made on first use: ``bondsim --help`` never loads rich (every import counts
    in a command that should answer at once). Attributes are the console's; ``.rich`` is the console."""

    def __init__(self, stderr: bool = False):
        self.stderr = stderr
        self.made: Console | None = None

    @property
    def rich(self) -> Console:
        if self.made is None:
            from rich.console import Console

            # soft_wrap: a line of text is never broken by rich, so a path or a command it
            # names (`More: bondsim runs list ...`) stays whole to copy; tables still fit the width.
            self.made = Console(stderr=self.stderr, soft_wrap=True)
        return self.made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich, name)


console = LazyConsole()
errors = LazyConsole(stderr=True)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every ``bondsim`` command's help: descriptions and example epilogs printed as written."""


def add_overrides(p: argparse.ArgumentParser, what: str = "the scenario") -> None:
    """``--set PATH=VALUE``, repeatable."""
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help=f"override a field of {what} by its dotted path (lists by index), e.g. links.1.period_ms=40; repeatable",
    )


def add_kernel(p: argparse.ArgumentParser) -> None:
    """``--kernel NAME``: a TCP preset (``bondsim.kernels.TCP``) in place of the file's values of its
    fields, before the ``--set`` overrides."""
    from bondsim import kernels

    p.add_argument(
        "--kernel",
        choices=[*kernels.TCP, *kernels.ALIASES.values()],
        help="run the TCP sender as that kernel era did (sender.kernel): linux-3.x (FACK, early retransmit, "
        "NCR, forward retransmission, TLP with 3.10's floor, no RACK; the seeds' kernels), linux-2.6 (2.6.32: "
        "3.x's loss detection without early retransmit, TLP or TCP small queues, rate halving instead of PRR, "
        "an initial window of 3) or current (alias modern: RACK-TLP, the defaults); it replaces what the "
        "scenario file sets of the fields any preset sets, and --set still wins",
    )


def add_execution_options(p: argparse.ArgumentParser, db_default: Path | None) -> None:
    """``--workers``, ``--dask`` and ``--db``: where runs execute and land."""
    p.add_argument(
        "--workers", type=int, help="local threads, or --dask local's worker processes (default: every core)"
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address (tcp://host:8786), a scheduler file (*.json), "
        "or `local` for a LocalCluster on this machine",
    )
    p.add_argument(
        "--db",
        type=Path,
        default=db_default,
        help=f"results database (DuckDB file); runs already in it are not run again (default {db_default or 'none'})",
    )


def _nearest_existing(path: Path) -> Path:
    """``path`` or the nearest of its parents that exists."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def count(text: str) -> int:
    """An argparse type: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more; got {text!r}")
    return value


def finite(text: str) -> float:
    """An argparse type: a finite number (not NaN, not an infinity)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number; got {text!r}")
    return value


def positive(text: str) -> float:
    """An argparse type: a finite number above 0 (seconds of a run: 0, a negative number, NaN or an
    infinity would run nothing, or for ever); refused while the arguments are read, before any check
    that needs root."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r}")
    return value


def path_arg(text: str) -> Path:
    """An argparse type: a path that is not empty (``Path("")`` would be the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file or directory name")
    return Path(text)


def check_out_dir(path: Path, option: str = "--out") -> None:
    """Refuses, before anything runs, an output directory that cannot be made or written into."""
    path = Path(path).absolute()
    if path.exists():
        if not path.is_dir():
            raise BondsimError(f"{option}: {path} exists and is not a directory; give a directory to write into")
        if not os.access(path, os.W_OK | os.X_OK):
            raise BondsimError(f"{option}: cannot write into {path}: permission denied")
        return
    found = _nearest_existing(path)
    if not found.is_dir():
        raise BondsimError(f"{option}: cannot create {path}: {found} is a file, not a directory")
    if not os.access(found, os.W_OK | os.X_OK):
        raise BondsimError(f"{option}: cannot create {path}: no permission to write into {found}")


def check_out_file(path: Path, option: str = "--out", example: str = "figure.png") -> None:
    """Refuses, before anything is computed, an output file that cannot be written (``example``: a file name
    of the kind written, for the error of a directory given)."""
    path = Path(path).absolute()
    if path.is_dir():
        raise BondsimError(f"{option}: {path} is a directory; give a file name (e.g. {path / example})")
    if path.exists() and not os.access(path, os.W_OK):
        raise BondsimError(f"{option}: cannot write {path}: permission denied")
    if not path.exists():
        found = _nearest_existing(path.parent)
        if not found.is_dir():
            raise BondsimError(f"{option}: cannot create {path}: {found} is a file, not a directory")
        check_out_dir(path.parent, option)


def write_error(option: str, exc: OSError) -> BondsimError:
    """An error writing an output, as one line naming the option and the file."""
    where = f"{exc.filename}: " if exc.filename else ""
    return BondsimError(f"{option}: cannot write {where}{exc.strerror or exc}")


def not_written_by_run(run_dir: object, exc: KeyError) -> BondsimError:
    """The error for a run directory one of whose tables lacks a column its readers need."""
    return BondsimError(
        f"{run_dir}: not a run directory as bondsim run --out writes it (a table has no column {exc.args[0]!r})"
    )
