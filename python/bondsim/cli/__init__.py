"""The ``bondsim`` command line: :func:`main` reads the arguments and runs the command, saying every
fault in one line (exit 2), an interrupt as 130 and a closed pipe as a Unix tool does.

A module per group of commands, each adding its parsers (``add_parsers``) and holding their ``cmd_*``
functions; what they share is :mod:`bondsim.cli.common`:

* :mod:`~bondsim.cli.run`: ``run``;
* :mod:`~bondsim.cli.figures`: ``plot``, ``reproduce``, ``report``;
* :mod:`~bondsim.cli.catalog`: ``schedulers``, ``scenario list|check``;
* :mod:`~bondsim.cli.sweep`: ``sweep``, ``runs ...``;
* :mod:`~bondsim.cli.emulate`: ``emulate``, ``validate`` (and its leagues).

The library (:mod:`bondsim.api`, :mod:`bondsim.sweeps`, :mod:`bondsim.emulate`, ...) never imports it."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Sequence

from bondsim import _core
from bondsim._core import BondsimError
from bondsim.cli.common import HelpFormatter, errors

EPILOG_MAIN = """\
examples:
  bondsim scenario list
  bondsim run thesis --out out/rr
  bondsim run thesis --set bond.mode=lb --set workload.requests=50 --json
  bondsim sweep thesis_load
  bondsim runs list --sweep thesis_load
  bondsim reproduce thesis --out out/thesis
  bondsim schedulers
"""


#: Each group of commands: its module, the commands it adds and the function that adds their parsers, in the
#: order ``bondsim --help`` lists them.
PARSERS = (
    ("run", ("run",), "add_parsers"),
    ("figures", ("plot", "reproduce", "report"), "add_parsers"),
    ("catalog", ("schedulers",), "add_schedulers"),
    ("sweep", ("sweep", "runs"), "add_parsers"),
    ("emulate", ("emulate", "validate"), "add_parsers"),
    ("catalog", ("scenario",), "add_scenario"),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given ``command`` (the first argument) that names a command, only its group's
    module is imported and its parsers added: a command pays for no other's imports (``bondsim report`` for
    none of ``emulate``'s); otherwise every command's, for the help and for argparse's own errors."""
    import importlib

    parser = argparse.ArgumentParser(
        prog="bondsim",
        description="Simulate NIC bonding: which mode or scheduler gives the most throughput, "
        "the fewest out-of-order packets, the best balance.",
        epilog=EPILOG_MAIN,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bondsim {_core.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups = [group for group in PARSERS if command in group[1]] or PARSERS
    for module, _, add in groups:
        getattr(importlib.import_module(f"bondsim.cli.{module}"), add)(sub)
    return parser


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser that ``args`` came through: `bondsim scenario check`'s for
    ``bondsim scenario check a b``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            return _chosen(action.choices[getattr(args, action.dest)], args)
    return parser


#: The exit status of a command whose reader went away (``bondsim runs list | head``): a Unix tool's,
#: killed by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE = 141


def _reader_gone() -> int:
    """Ends a command quietly when what reads its output has stopped reading (``| head``), as a Unix tool
    does: no message, exit :data:`EXIT_BROKEN_PIPE`. Standard output is pointed at ``/dev/null`` so that
    the interpreter's last flush of what is still buffered cannot fail again on the way out. (SIGPIPE
    itself stays ignored, as Python sets it: a Dask connection that closes must not kill the process.)"""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE


def entry() -> int:
    """The ``bondsim`` command (the script pip installs, ``python -m bondsim.cli``): :func:`main` on the process's
    arguments, then what the command leaves is taken out of the garbage collector's sight (:func:`gc.freeze`) for
    the interpreter to free as it ends without going through every object once more (DuckDB's modules above all:
    20-30 ms of ``bondsim report``'s 0.4 s). Not in :func:`main`, which a process may call and go on."""
    status = main()
    gc.freeze()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command given, with its usage (argparse's own says the top level's)
        _chosen(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    from bondsim.interrupt import sigterm_as_interrupt
    from bondsim.scenario import warnings_to

    try:
        # what a scenario sets that its run ignores: a line each on stderr, once per command
        with warnings_to(lambda text: print(f"warning: {text}", file=sys.stderr)), sigterm_as_interrupt():
            status = args.func(args)
        sys.stdout.flush()  # within reach of the handlers: what is still buffered meets a closed pipe here
        return status
    except BrokenPipeError:
        return _reader_gone()
    except BondsimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine said no (a file, a disk, a permission): one line all the same
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except RecursionError:  # a document nested beyond what any reader checks: one line all the same
        print("error: the input nests tables or arrays too deeply", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130
    except Exception as exc:
        # DuckDB finds some damage only when it reads the part of the file that holds it (a truncated
        # or corrupt block met by a query, not on opening): one line naming the database all the same
        duckdb = sys.modules.get("duckdb")
        if duckdb is None or not isinstance(exc, duckdb.Error):
            raise
        if isinstance(exc, duckdb.InterruptException):
            errors.print("interrupted")
            return 130
        from bondsim.store import database_error

        print(f"error: {database_error(getattr(args, 'db', None) or 'the results database', exc)}", file=sys.stderr)
        return 2
