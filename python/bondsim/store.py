"""The results database: every run, its per-link and per-request tables, and the sweeps, in one DuckDB file.

Only the process coordinating a sweep writes (workers hand their results back
to it), one transaction per batch of completed runs, so a killed sweep loses
at most the runs still in flight. Tables:

* ``runs``: one row per run. Fixed columns ``run_id``, ``scenario_hash``,
  ``name``, ``seed``, ``version``, ``created_at``, ``engine`` (``simulator``, or
  ``emulator``: ``bondsim emulate`` over the kernel's TCP), ``scenario`` (JSON, the
  checked scenario) and ``summary`` (JSON, everything the core reported), then
  one column per scalar summary figure (``ooo_fraction``, ...), added the first
  time a run has it, typed as the core's schema types it (``bondsim.api.schemas()``).
* one table per table of a result (``links``, ``requests``, ...): ``run_id``
  and the core's columns, with the core's types (a run's pyarrow tables, which
  DuckDB reads as they are). A column a database made before the types were
  the core's holds as another type is migrated to the core's type when a run is
  next added.
* ``sweeps`` (``sweep_id``, ``name``, ``spec`` JSON, ``grid_hash``,
  ``created_at``) and ``sweep_points`` (``sweep_id``, ``point``,
  ``scenario_hash``, ``seed``, ``labels`` JSON: the swept values).

A simulated run is stored once per (scenario hash, bondsim version): the hash covers
the checked scenario with its seed, so re-running a sweep skips what is stored. An
emulated run is a measurement of its own (the kernel's TCP and the host's timing vary
from run to run): its key is the scenario's hash with the moment it was stored
(:func:`run_key`), so it is never skipped as, nor taken for, another run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import numbers
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from bondsim._core import BondsimError, __version__
from bondsim.api import RunResult, arrow_table, as_column, schemas
from bondsim.scenario import scenario_hash, type_error

if TYPE_CHECKING:  # numpy, pandas and pyarrow load on use: `bondsim report` reads its runs without them
    import pandas as pd
    import pyarrow as pa

#: The database a command uses when not given ``--db``.
DEFAULT_DB = Path("bondsim.duckdb")

#: The runs table's own columns; summary figures of the same name live only in ``summary``.
RUN_COLUMNS = ("run_id", "scenario_hash", "name", "seed", "version", "created_at", "engine", "scenario", "summary")

#: The columns every stored run of a sweep has (:meth:`Store.runs` with ``sweep``): its point in the grid and
#: the runs table's own. A swept value cannot take one of these names (:mod:`bondsim.grid` refuses them).
SWEEP_RUN_COLUMNS = ("point", *RUN_COLUMNS)

#: What ran a stored run: the simulator (``bondsim run``, sweeps) or the emulator (``bondsim emulate``).
ENGINES = ("simulator", "emulator")
#: The engine of the runs of a database made before ``engine`` was stored: they were simulated.
LEGACY_ENGINE = ENGINES[0]


def _create_runs(figures: Mapping[str, str] | None = None) -> str:
    """The statement that creates the runs table: its own columns, then ``figures`` (name -> DuckDB type), the
    summary's figures, which a first commit adds (:meth:`Store._append`)."""
    extra = f", {_column_defs(figures)}" if figures else ""
    return f"""
CREATE TABLE IF NOT EXISTS runs (
    run_id BIGINT PRIMARY KEY,
    scenario_hash VARCHAR NOT NULL,
    name VARCHAR,
    seed UBIGINT,
    version VARCHAR NOT NULL,
    created_at TIMESTAMP DEFAULT current_timestamp,
    scenario JSON,
    summary JSON,
    engine VARCHAR DEFAULT '{LEGACY_ENGINE}'{extra},
    UNIQUE (scenario_hash, version)
)"""


_SCHEMA = f"""
{_create_runs()};
-- a database made before ``engine`` gains it here (its runs were simulated)
ALTER TABLE runs ADD COLUMN IF NOT EXISTS engine VARCHAR DEFAULT '{LEGACY_ENGINE}';
CREATE TABLE IF NOT EXISTS sweeps (
    sweep_id BIGINT PRIMARY KEY,
    name VARCHAR NOT NULL,
    grid_hash VARCHAR NOT NULL,
    spec JSON,
    created_at TIMESTAMP DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS sweep_points (
    sweep_id BIGINT NOT NULL,
    point BIGINT NOT NULL,
    scenario_hash VARCHAR NOT NULL,
    seed UBIGINT,
    labels JSON,
    PRIMARY KEY (sweep_id, point)
);
"""

#: The runs table's columns as :data:`_SCHEMA` creates it, before any figure (``engine`` last).
_BARE_RUN_COLUMNS = (*(c for c in RUN_COLUMNS if c != "engine"), "engine")


def _run_fields() -> list[pa.Field]:
    """The Arrow types of the runs table's own columns, as :data:`_SCHEMA` creates them (``created_at`` is the
    database's)."""
    import pyarrow as pa

    return [
        pa.field(name, kind)
        for name, kind in (
            ("run_id", pa.int64()),
            ("scenario_hash", pa.string()),
            ("name", pa.string()),
            ("seed", pa.uint64()),
            ("version", pa.string()),
            ("engine", pa.string()),
            ("scenario", pa.string()),
            ("summary", pa.string()),
        )
    ]


def _swept(labels: Iterable[str]) -> list[str]:
    """The swept values' names among a sweep's point labels (a runs table's own column is not one)."""
    return [name for name in labels if name not in RUN_COLUMNS]


def _frames_by_run(con: duckdb.DuckDBPyConnection, query: str, ids: list[int]) -> dict[int, pd.DataFrame]:
    """A per-run table's rows that ``query`` selects (of the runs ``ids``, by run id), a DataFrame per run: through
    Arrow as a run's own tables become DataFrames (integers with nulls as float64)."""
    stored = con.sql(query, params=[ids])
    fetch = getattr(stored, "to_arrow_table", None) or stored.arrow  # DuckDB 2 / 1
    frame = fetch().to_pandas(split_blocks=True)
    return {
        int(run_id): part.drop(columns="run_id").reset_index(drop=True)
        for run_id, part in frame.groupby("run_id", sort=False)
    }


def _columns_by_run(con: duckdb.DuckDBPyConnection, query: str, ids: list[int]) -> dict[int, dict[str, list]]:
    """The same rows as :func:`_frames_by_run` (in run id order), ``{column: [values]}`` per run, without pyarrow or
    pandas: each column over all the runs as their DataFrames held it (:func:`bondsim.api.as_column`)."""
    cursor = con.execute(query, [ids])
    names = [d[0] for d in cursor.description]
    transposed = list(zip(*cursor.fetchall(), strict=True)) or [()] * len(names)
    columns = {name: as_column(list(values)) for name, values in zip(names, transposed, strict=True)}
    rows_of: dict[int, list[int]] = {}  # each run's rows, in the order read
    for i, run_id in enumerate(columns.pop("run_id", [])):
        rows_of.setdefault(int(run_id), []).append(i)
    return {
        run_id: {name: [values[i] for i in rows] for name, values in columns.items()}
        for run_id, rows in sorted(rows_of.items())
    }


def _with_engine(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with an ``engine`` column: a database made before it, opened read-only, has none."""
    if "engine" not in runs:
        runs["engine"] = LEGACY_ENGINE
    return runs


def _stacked(kind: str, run_ids: Sequence[int], outputs: Sequence[dict]) -> pa.Table:
    """One table of several runs' outputs, stacked, with their run ids (a column a run lacks is null): the
    runs' pyarrow tables, not copied."""
    import numpy as np
    import pyarrow as pa

    parts = []
    for run_id, output in zip(run_ids, outputs, strict=True):
        if output.get(kind) is None:
            continue
        table = arrow_table(kind, output[kind])
        parts.append(table.add_column(0, "run_id", pa.array(np.full(table.num_rows, run_id, dtype=np.int64))))
    stacked = pa.concat_tables(parts, promote_options="permissive")  # the emulator's own columns may differ
    # One chunk, not one a run: DuckDB inserts a table of many small chunks (a few rows a run) several times
    # slower (400 runs' links: 190 ms against under 20). A large one (traces) stays as it is, not copied.
    return stacked.combine_chunks() if stacked.num_rows <= COMBINE_ROWS else stacked


def _has_rows(table: Any) -> bool:
    """Whether a run's table (the core's or pyarrow, or ``{column: [values]}``) has columns to store (as before it
    was Arrow, a table of no columns is not stored; one of columns and no rows creates its table)."""
    return bool(table) if isinstance(table, Mapping) else table is not None


def run_key(scenario: dict, engine: str) -> str:
    """The key a run is stored under (``scenario_hash``): the simulator's, the checked scenario's hash (the same
    scenario and seed give the same run); the emulator's, that hash with the engine and the moment (each
    emulation is a measurement of its own)."""
    if engine not in ENGINES:
        raise ValueError(f"engine: one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "simulator":
        return scenario_hash(scenario)
    return scenario_hash({"engine": engine, "at_ns": time.time_ns(), "scenario": scenario})


def scalar_figures(summary: dict) -> dict[str, Any]:
    """The summary's scalar figures (not its nested per-link lists)."""
    return {k: v for k, v in summary.items() if not isinstance(v, list | dict)}


def _runs_table(rows: list[dict]) -> pa.Table:
    """The runs' rows as a pyarrow table: the runs table's own columns, then the summary's scalar figures typed
    as the core's schema types them (a figure it does not declare, such as the emulator's own, as pyarrow reads
    it; one no run has a value of as DOUBLE)."""
    import pyarrow as pa

    figures = [f for f in schemas()["summary"] if f.name not in RUN_COLUMNS]
    known = set(RUN_COLUMNS) | {f.name for f in figures}
    extra = []
    for name in dict.fromkeys(k for row in rows for k in row if k not in known):
        kind = pa.array([row.get(name) for row in rows]).type
        extra.append(pa.field(name, pa.float64() if pa.types.is_null(kind) else kind))
    return pa.Table.from_pylist(rows, schema=pa.schema([*_run_fields(), *figures, *extra]))


def grid_hash(points: Iterable[tuple[int, str, int, dict]]) -> str:
    """What tells one sweep's grid ``(point, scenario_hash, seed, labels)`` from another's: the scenarios and
    the swept values, in grid order (the hash of ``[[scenario_hash, labels], ...]`` as JSON, taken row by
    row)."""
    digest = hashlib.sha256(b"[")
    for i, (_, h, _, labels) in enumerate(points):
        digest.update((", " if i else "").encode() + json.dumps([h, labels], sort_keys=True, default=str).encode())
    digest.update(b"]")
    return digest.hexdigest()[:16]


#: A commit's per-run tables of at most this many rows together are copied into one chunk for DuckDB
#: (:func:`_stacked`); larger ones are handed over as the runs made them.
COMBINE_ROWS = 1 << 16

#: Rows a sweep's grid is written in at a time (``Store.add_sweep``), and scenario hashes looked up at a
#: time (``Store.stored``): what a grid of millions holds in memory at once.
CHUNK_ROWS = 100_000


def _chunks(items: Iterable, size: int = CHUNK_ROWS) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _column_defs(columns: Mapping[str, str]) -> str:
    """Columns (name -> DuckDB type) as a table's definition lists them."""
    return ", ".join(f"{_ident(name)} {kind}" for name, kind in columns.items())


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: How long opening the database waits for another process to let go of it (DuckDB lets one
#: process at a time write, and no one read meanwhile): a sweep holds it only while it commits a batch.
LOCK_WAIT_S = 30.0


def database_error(path: str | Path, exc: duckdb.Error) -> BondsimError:
    """A DuckDB error about the results database ``path`` as one line naming the file and what to do: a
    file DuckDB cannot read (a checksum that does not match, a truncated file, DuckDB's own internal
    errors on it) is not a readable bondsim results database; one whose tables are not bondsim's is not
    one at all; a write the machine refused (a full disk) says so; anything else is DuckDB's first line."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    lowered = reason.lower()
    if any(w in lowered for w in ("no space", "disk full", "quota exceeded", "disk quota")):
        # (DuckDB says it as an IOException, or as a TransactionException when the commit's log cannot grow)
        return BondsimError(
            f"{path}: cannot write the results database ({reason}); the runs committed before are kept whole "
            "(each commit is all or nothing): free some space and run again, and what is stored is not run again"
        )
    if isinstance(exc, duckdb.IOException | duckdb.SerializationException | duckdb.InternalException) or (
        "corrupt" in lowered or type(exc) is duckdb.Error or isinstance(exc, duckdb.FatalException)
    ):
        return BondsimError(
            f"{path}: not a readable bondsim results database (DuckDB: {reason}); "
            "restore it from a copy, or pass another --db"
        )
    if isinstance(exc, duckdb.CatalogException | duckdb.BinderException):
        return BondsimError(f"{path}: not a bondsim results database (DuckDB: {reason}); pass another --db")
    return BondsimError(f"{path}: the results database refused a query (DuckDB: {reason})")


#: The largest run id DuckDB's BIGINT holds (and so the largest a stored run can have).
MAX_RUN_ID = 2**63 - 1


def _connect(path: Path, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    """A connection to ``path``, waiting up to ``wait_s`` for a process that has it open to let go."""
    deadline = time.monotonic() + wait_s
    pause = 0.02
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            reason = str(exc).splitlines()[0]
            if "lock" not in reason.lower():
                if "could not read" in reason.lower():  # a truncated file
                    raise database_error(path, exc) from None
                raise BondsimError(f"{path}: cannot open the results database ({reason})") from None
            if time.monotonic() >= deadline:
                holder = re.search(r"\(PID (\d+)\)", reason)
                who = f"process {holder.group(1)}" if holder else "another process"
                raise BondsimError(
                    f"{path}: {who} has held the results database for {wait_s:.0f} s (DuckDB lets one process "
                    "write at a time and no one read meanwhile; a sweep lets go between batches of runs): "
                    "try again in a moment, or read a copy of the file"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
        except duckdb.Error as exc:  # a corrupt file: DuckDB's plain Error ("Corrupt database file: ...")
            raise database_error(path, exc) from None


def _file_state(path: Path) -> tuple[int, ...] | None:
    """The file at ``path`` as its metadata tells it (device, inode, size, times; None if there is none): equal
    before and after a store lets go of it, no other process wrote to it or put another file in its place."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def _check_kind(path: Path) -> None:
    """Refuses a ``path`` that is no DuckDB file (or none yet): a FIFO would block the open for ever, and an
    SQLite file makes DuckDB try to download a reader for it."""
    if path.exists() and not path.is_file() and not path.is_dir():
        raise BondsimError(f"{path}: not a regular file, not a bondsim results database; pass another --db")
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as f:
            head = f.read(16)
        # DuckDB's files carry "DUCK" after an 8-byte checksum
        if head[8:12] != b"DUCK":
            kind = "is an SQLite database" if head.startswith(b"SQLite format") else "is another kind of file"
            raise BondsimError(f"{path}: {kind}, not a bondsim results database (DuckDB); pass another --db")


def _check_whole(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuses a DuckDB file shorter than the blocks its header counts (a copy or a download cut short, a
    disk that filled): DuckDB itself opens it and fails only when a query reaches a missing block, perhaps
    after a sweep has written to it. Left to DuckDB while a write-ahead log is beside it (its blocks may
    be counted before they are written)."""
    if Path(f"{path}.wal").exists() or not path.is_file():
        return
    cursor = con.execute("PRAGMA database_size")
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    if not rows or not {"used_blocks", "block_size"} <= set(rows[0]):
        return
    # the blocks in use lie within the file (free ones at its end are cut off, and still counted in
    # total_blocks): a lower bound on its size that a whole file always meets
    expected = int(rows[0]["used_blocks"]) * int(rows[0]["block_size"])
    size = path.stat().st_size
    if size < expected:
        raise BondsimError(
            f"{path}: not a readable bondsim results database (the file is {size:,} bytes, shorter than the "
            f"{expected:,} bytes of blocks its header says are in use: cut short); restore it from a copy, "
            "or pass another --db"
        )


#: The runs table's columns that tell a bondsim results database from another DuckDB file.
_OWN_RUN_COLUMNS = frozenset({"run_id", "scenario_hash", "version", "scenario", "summary"})

#: What a look at DuckDB's catalog (``duckdb_columns()``, ``duckdb_tables()``) keeps to: the results database's own
#: tables. Without it DuckDB reads its built-in schemas too, making their views (information_schema's, pg_catalog's)
#: at first sight, 15-20 ms, more than a report's other queries, to list none of them (they are internal).
_OWN = "database_name = current_database()"


def _check_schema(con: duckdb.DuckDBPyConnection, path: Path, read_only: bool, runs: Mapping[str, str]) -> None:
    """Refuses a DuckDB file that is not a bondsim results database before anything is written to it
    (another program's tables are left as they are): a ``runs`` table (``runs``: its columns, none if it has no
    such table) not bondsim's, or, to write, other tables and none of bondsim's; to read, one with no runs table."""
    if runs:
        missing = sorted(_OWN_RUN_COLUMNS - set(runs))
        if missing:
            raise BondsimError(
                f"{path}: its table `runs` is not bondsim's (no column {', '.join(missing)}): "
                "not a bondsim results database; pass another --db"
            )
        return
    if read_only:
        raise BondsimError(
            f"{path}: no runs stored here (a DuckDB file without bondsim's tables); "
            "run a sweep into it first, or pass another --db"
        )
    tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if tables:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise BondsimError(
            f"{path}: a DuckDB database of another program (tables {shown}), not a bondsim results database; "
            "pass another --db"
        )


@contextlib.contextmanager
def _interrupts_as_keyboard() -> Iterator[None]:
    """A Ctrl-C (or SIGTERM, :mod:`bondsim.interrupt`) that lands while DuckDB runs a query is heard by
    DuckDB first, which says it its own way (an ``InterruptException``, or from a commit a plain
    ``RuntimeError("Query interrupted")``, duckdb 2.0); raised here as the ``KeyboardInterrupt`` it was, so
    that a stopped sweep says what it stored, as for a Ctrl-C anywhere else."""
    try:
        yield
    except (duckdb.InterruptException, RuntimeError) as exc:
        if isinstance(exc, duckdb.InterruptException) or str(exc) == "Query interrupted":
            raise KeyboardInterrupt from None
        raise


class Store:
    """A results database (DuckDB file); use as a context manager or call :meth:`close`.

    A writing store lets go of the file whenever :meth:`release` is called (a sweep does after every
    batch of runs it commits), so that other processes can read it meanwhile; it opens the file
    again when next used, waiting for readers to let go."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, read_only: bool = False, wait_s: float = LOCK_WAIT_S):
        if not isinstance(path, str | os.PathLike):
            raise type_error("path", "a results database: a DuckDB file name (str or Path)", path)
        self.path = Path(path)
        self.read_only = read_only
        self.wait_s = wait_s
        if read_only and not self.path.exists():
            raise BondsimError(f"{self.path}: no results database here (run a sweep first, or pass --db)")
        _check_kind(self.path)  # once: the file is opened again after every release
        self._con: duckdb.DuckDBPyConnection | None = None
        self._forget()
        self.con  # noqa: B018 (open now: an unusable file is an error here, not at first use)

    def _forget(self) -> None:
        """Drops what this store remembers of the database (its tables and their columns, its next run id): done when
        another process wrote to the file, or replaced it, while this store had let go of it. A sweep's
        store, alone with its file, keeps the columns from one commit to the next (a writer that took the
        file between this store's close and its look at it would go unseen: a column added twice is then
        let be, and the run ids are asked again at every open)."""
        self._columns: dict[str, dict[str, str]] = {}
        self._kinds: list[str] | None = None
        self._seen_shapes: set[tuple] = set()
        self._next_run_id: int | None = None
        self._left: tuple[int, ...] | None = None  # the file as this store last let go of it

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection, opened (again) if need be."""
        if self._con is None:
            self._con = _connect(self.path, self.read_only, self.wait_s)
            try:
                # held now, the file is as another process left it: opening it changes nothing
                if self._left is None or self._left != _file_state(self.path):
                    # the first open, or another process wrote to the file or replaced it meanwhile
                    self._forget()
                    _check_whole(self._con, self.path)
                    _check_schema(self._con, self.path, self.read_only, self.columns("runs"))
                    if not self.read_only:
                        self._con.execute(_SCHEMA)
                        self._columns.clear()  # (the runs table made, or given a column, just now)
            except (BondsimError, duckdb.Error) as exc:
                self._con.close()
                self._con = None
                if isinstance(exc, duckdb.Error):
                    raise database_error(self.path, exc) from None
                raise
        return self._con

    def release(self) -> None:
        """Lets go of the file until next used, so that other processes may open it."""
        if self._con is not None:
            self._con.close()
            self._con = None
            self._left = _file_state(self.path)
            self._next_run_id = None  # asked again (a query): another writer may take the file at once

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.release()

    # -- writing -----------------------------------------------------------------------------------

    def columns(self, table: str) -> dict[str, str]:
        """Column name -> DuckDB type of ``table`` (empty if it does not exist)."""
        if table not in self._columns:
            rows = self.con.execute(
                f"SELECT column_name, data_type FROM duckdb_columns() WHERE {_OWN} AND NOT internal "
                "AND table_name = ? ORDER BY column_index",
                [table],
            ).fetchall()
            self._columns[table] = dict(rows)
        return self._columns[table]

    def _append(self, table: str, frame: pa.Table | pd.DataFrame, typed: Iterable[str] = ()) -> None:
        """Inserts ``frame`` (a pyarrow table, which DuckDB reads as it is, or a DataFrame) into ``table``,
        creating the table or adding columns first. A column of ``typed`` (the core's schema types it) that a
        database made before the schema was the core's holds as another type is migrated to the core's."""
        import pyarrow as pa

        self.con.register("incoming", frame)
        try:
            names = frame.column_names if isinstance(frame, pa.Table) else list(frame.columns)
            types = frame.schema.types if isinstance(frame, pa.Table) else frame.dtypes
            shape = (table, tuple(names), tuple(str(t) for t in types))
            if shape not in self._seen_shapes:
                incoming = {row[0]: row[1] for row in self.con.execute("DESCRIBE SELECT * FROM incoming").fetchall()}
                self._adopt(table, incoming, set(typed))
                self._seen_shapes.add(shape)
            have = self.columns(table)
            names = ", ".join(_ident(c) for c in names if c in have)
            self.con.execute(f"INSERT INTO {_ident(table)} ({names}) SELECT {names} FROM incoming")
        finally:
            with contextlib.suppress(duckdb.Error):  # an aborted transaction refuses even this
                self.con.unregister("incoming")

    def _adopt(self, table: str, incoming: Mapping[str, str], typed: set[str]) -> None:
        """Makes ``table`` hold the ``incoming`` columns (name -> DuckDB type): creates it, or adds the columns it
        lacks; a column of ``typed`` held as another type is migrated to ``incoming``'s. A fresh database's empty
        runs table is made again with every figure at once (one ALTER a column costs DuckDB half a millisecond,
        and a summary has over a hundred figures): the same columns, in the same order, as added one by one."""
        have = self.columns(table)
        if not have:
            self.con.execute(f"CREATE TABLE {_ident(table)} ({_column_defs(incoming)})")
            self._columns[table] = dict(incoming)
            return
        missing = {c: t for c, t in incoming.items() if c not in have}
        fresh = table == "runs" and tuple(have) == _BARE_RUN_COLUMNS and missing
        if fresh and self.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0:
            self.con.execute("DROP TABLE runs")
            self.con.execute(_create_runs(missing))
            have, missing = {**have, **missing}, {}
        for column, kind in missing.items():
            self.con.execute(f"ALTER TABLE {_ident(table)} ADD COLUMN IF NOT EXISTS {_ident(column)} {kind}")
        retyped = [c for c, kind in incoming.items() if c in typed and c in have and have[c] != kind]
        for column in retyped:
            self.con.execute(f"ALTER TABLE {_ident(table)} ALTER {_ident(column)} TYPE {incoming[column]}")
        if missing or retyped:
            self._columns.pop(table, None)  # (asked again: a column added meanwhile by another writer is let be)
        else:
            self._columns[table] = have

    def add(self, runs: Sequence[tuple[str, dict, dict]], engine: str = "simulator") -> list[int]:
        """Stores ``(scenario_hash, scenario, output)`` triples in one transaction, ``output`` being the
        core's result (``summary`` as a dict, tables as pyarrow tables or ``{column: [values]}``), each ``engine``'s
        (:data:`ENGINES`); returns their run ids.
        A run already stored (by another process meanwhile) is not stored again: its id is returned."""
        if not runs:
            return []
        with _interrupts_as_keyboard():
            return self._add(runs, engine)

    def _add(self, runs: Sequence[tuple[str, dict, dict]], engine: str) -> list[int]:
        known = self.stored([key for key, _, _ in runs])
        fresh = [run for run in runs if run[0] not in known]
        if fresh:
            if self._next_run_id is None:
                self._next_run_id = self.con.execute("SELECT coalesce(max(run_id), 0) + 1 FROM runs").fetchone()[0]
            ids = list(range(self._next_run_id, self._next_run_id + len(fresh)))
            rows = []
            for run_id, (key, scenario, output) in zip(ids, fresh, strict=True):
                figures = {k: v for k, v in scalar_figures(output["summary"]).items() if k not in RUN_COLUMNS}
                rows.append(
                    {
                        "run_id": run_id,
                        "scenario_hash": key,
                        "name": scenario.get("name"),
                        "seed": scenario.get("seed"),
                        "version": __version__,
                        "engine": engine,
                        "scenario": json.dumps(scenario),
                        "summary": json.dumps(output["summary"]),
                        **figures,
                    }
                )
            kinds = dict.fromkeys(
                k for _, _, output in fresh for k, v in output.items() if k != "summary" and _has_rows(v)
            )
            summary = schemas()["summary"].names
            with self._transaction():
                self._append("runs", _runs_table(rows), summary)
                for kind in kinds:
                    stacked = _stacked(kind, ids, [output for _, _, output in fresh])
                    self._append(kind, stacked, schemas()[kind].names if kind in schemas() else ())
            self._next_run_id += len(fresh)
            known |= {key: run_id for (key, _, _), run_id in zip(fresh, ids, strict=True)}
        return [known[key] for key, _, _ in runs]

    def add_result(self, result: RunResult, engine: str) -> int:
        """Stores one run's result (:func:`run_key` says under which key); returns its run id."""
        key = run_key(result.scenario, engine)
        return self.add([(key, result.scenario, result.output())], engine)[0]

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """Commits what the block writes, or nothing of it."""
        self.con.begin()
        try:
            yield
            self.con.commit()
        except BaseException:
            # A Ctrl-C may land once the commit has ended the transaction: there is then nothing to roll
            # back, and the interrupt (not DuckDB's "no transaction is active") is what the caller hears.
            with contextlib.suppress(duckdb.Error):
                self.con.rollback()
            self._columns.clear()
            self._seen_shapes.clear()
            raise

    def add_sweep(self, name: str, spec: dict, points: Iterable[tuple[int, str, int, dict]]) -> int:
        """Records a sweep and its grid ``(point, scenario_hash, seed, labels)`` (iterated twice, written
        :data:`CHUNK_ROWS` rows at a time, in one transaction); the same grid under the same name is recorded
        once. Returns its sweep id."""
        digest = grid_hash(points)
        found = self._sweep_of(name, digest)
        if found is not None:
            return found
        import pandas as pd

        sweep_id = self.con.execute("SELECT coalesce(max(sweep_id), 0) + 1 FROM sweeps").fetchone()[0]
        with self._transaction():
            self.con.execute(
                "INSERT INTO sweeps (sweep_id, name, grid_hash, spec) VALUES (?, ?, ?, ?)",
                [sweep_id, name, digest, json.dumps(spec, default=str)],
            )
            for chunk in _chunks(points):
                frame = pd.DataFrame(
                    {
                        "sweep_id": sweep_id,
                        "point": [p[0] for p in chunk],
                        "scenario_hash": [p[1] for p in chunk],
                        "seed": [p[2] for p in chunk],
                        "labels": [json.dumps(p[3], default=str) for p in chunk],
                    }
                )
                self._append("sweep_points", frame)
        return sweep_id

    # -- reading -----------------------------------------------------------------------------------

    def stored(self, hashes: Iterable[str]) -> dict[str, int]:
        """Scenario hash -> run id of the runs of this bondsim version already stored (looked up
        :data:`CHUNK_ROWS` hashes at a time)."""
        found: dict[str, int] = {}
        for chunk in _chunks(hashes):
            found |= dict(
                self.con.execute(
                    "SELECT scenario_hash, run_id FROM runs WHERE version = ? AND scenario_hash IN (SELECT unnest(?))",
                    [__version__, chunk],
                ).fetchall()
            )
        return found

    def summaries(self, run_ids: Sequence[int]) -> dict[int, dict]:
        """The stored runs' summaries, by run id."""
        rows = self.con.execute(
            "SELECT run_id, summary FROM runs WHERE run_id IN (SELECT unnest(?))", [[int(i) for i in run_ids]]
        ).fetchall()
        return {run_id: json.loads(text) for run_id, text in rows}

    def record(self, run_id: int) -> dict:
        """A stored run's own columns, with its scenario and summary as dicts."""
        (run_id,) = self._checked_ids([run_id])
        cursor = self.con.execute("SELECT * FROM runs WHERE run_id = ?", [run_id])
        found = cursor.fetchone()
        if found is None:
            raise BondsimError(f"{run_id}: no run with that id in {self.path}")
        row = dict(zip((d[0] for d in cursor.description), found, strict=True))
        record = {c: row.get(c, LEGACY_ENGINE) if c == "engine" else row[c] for c in RUN_COLUMNS}
        record["scenario"], record["summary"] = json.loads(record["scenario"]), json.loads(record["summary"])
        record["created_at"] = str(record["created_at"])
        return record

    def load(self, run_ids: Sequence[int], *, plain: bool = False) -> dict[int, RunResult]:
        """The stored runs as results (summary, scenario and every table), by run id; with ``plain``, their tables
        read as ``{column: [values]}`` without pyarrow or pandas (:meth:`RunResult.columns`: what a report draws)."""
        if isinstance(run_ids, str) or not isinstance(run_ids, Iterable):
            raise BondsimError(f"run ids are a list of whole numbers, e.g. [1, 2]; got {run_ids!r}")
        ids = self._checked_ids(run_ids)  # numpy integers too, e.g. a runs() column
        rows = self.con.execute(
            "SELECT run_id, scenario, summary FROM runs WHERE run_id IN (SELECT unnest(?))", [ids]
        ).fetchall()
        missing = sorted(set(ids) - {row[0] for row in rows})
        if missing:
            raise BondsimError(f"no run with id {', '.join(map(str, missing))} in {self.path}")
        tables = {}
        for kind in self.table_kinds():
            # each run's rows in the order stored, as DuckDB reads a table when a query asks for no order (its
            # preserve_insertion_order); grouped by run here (ORDER BY run_id, rowid cost DuckDB 2-3 ms a table)
            query = f"SELECT * FROM {_ident(kind)} WHERE run_id IN (SELECT unnest(?))"
            tables[kind] = (_columns_by_run if plain else _frames_by_run)(self.con, query, ids)
        accepted = {"requests", "links", *RunResult.TRACES}
        if plain:
            empty: Any = {}
        else:
            import pandas as pd

            empty = pd.DataFrame()
        return {
            run_id: RunResult(
                scenario=json.loads(scenario),
                summary=json.loads(summary),
                # a run without a trace table has None for it, as when it ran
                **{
                    kind: by_run.get(run_id, empty if kind in ("requests", "links") else None)
                    for kind, by_run in tables.items()
                    if kind in accepted
                },
            )
            for run_id, scenario, summary in rows
        }

    def runs_with_traces(self) -> set[int]:
        """The run ids that recorded a time series (any of :attr:`RunResult.TRACES`)."""
        kinds = [k for k in self.table_kinds() if k in RunResult.TRACES]
        if not kinds:
            return set()
        # the run ids of every such table grouped at once: DuckDB groups a column of so few values (the run ids, whose
        # range it knows) by their place in a table, where a DISTINCT of each table hashed each of their rows
        stacked = " UNION ALL ".join(f"SELECT run_id FROM {_ident(k)}" for k in kinds)
        return {int(r[0]) for r in self.con.execute(f"SELECT run_id FROM ({stacked}) GROUP BY run_id").fetchall()}

    def table_kinds(self) -> list[str]:
        """The per-run tables in the database (``links``, ``requests``, ...): asked once by a store that only reads
        (no table is made while it holds the file; :meth:`_forget` drops them if another process wrote meanwhile)."""
        con = self.con  # (the file opened again first, if let go)
        if self._kinds is None or not self.read_only:
            self._kinds = [
                t
                for (t,) in con.execute(
                    f"SELECT table_name FROM duckdb_tables() WHERE {_OWN} "
                    "AND table_name NOT IN ('runs', 'sweeps', 'sweep_points', 'leagues') ORDER BY table_name"
                ).fetchall()
            ]
        return list(self._kinds)

    def sweep_of(self, name: str, points: Iterable[tuple[int, str, int, dict]]) -> int | None:
        """The id of the sweep recorded under ``name`` with this grid ``(point, scenario_hash, seed, labels)``
        (what :meth:`add_sweep` recorded for it), or None."""
        return self._sweep_of(name, grid_hash(points))

    def _sweep_of(self, name: str, digest: str) -> int | None:
        found = self.con.execute(
            "SELECT sweep_id FROM sweeps WHERE name = ? AND grid_hash = ?", [name, digest]
        ).fetchone()
        return None if found is None else found[0]

    def matching_sweeps(self, ref: str | int) -> list[int]:
        """The ids of the sweeps ``ref`` names: the sweep of that id (as ``bondsim runs sweeps`` shows it),
        else every sweep of that name."""
        text = str(ref).strip()
        if re.fullmatch(r"[0-9]+", text) and int(text) <= MAX_RUN_ID:  # (a longer one can only be a name)
            found = self.con.execute("SELECT sweep_id FROM sweeps WHERE sweep_id = ?", [int(text)]).fetchone()
            if found:
                return [found[0]]
        rows = self.con.execute("SELECT sweep_id FROM sweeps WHERE name = ? ORDER BY sweep_id", [text]).fetchall()
        return [r[0] for r in rows]

    def describe_sweeps(self, ids: Sequence[int] | None = None) -> str:
        """The sweeps ``ids`` (default: every one) in a line: name, id, points and the file they came from."""
        rows = self.con.execute(
            """
            SELECT s.sweep_id, s.name, count(p.point), json_extract_string(s.spec, '$.file')
            FROM sweeps s LEFT JOIN sweep_points p USING (sweep_id)
            WHERE ? OR s.sweep_id IN (SELECT unnest(?))
            GROUP BY ALL ORDER BY s.sweep_id
            """,
            [ids is None, [int(i) for i in ids or ()]],
        ).fetchall()
        return ", ".join(
            f"`{name}` id {sweep_id} ({points} point{'' if points == 1 else 's'}{f', from {file}' if file else ''})"
            for sweep_id, name, points, file in rows
        )

    def sweep_id(self, ref: str | int, where: str = "--sweep") -> int:
        """The sweep ``ref`` names: its id, or its name if no other sweep has that name (a
        :class:`~bondsim.BondsimError` at ``where`` listing them if several have)."""
        ids = self.matching_sweeps(ref)
        if len(ids) == 1:
            return ids[0]
        if not ids:
            have = self.describe_sweeps() or "none"
            raise BondsimError(f"{where}: no sweep named `{ref}` (nor of that id) in {self.path} (have: {have})")
        raise BondsimError(
            f"{where}: {len(ids)} sweeps in {self.path} are named `{ref}`: {self.describe_sweeps(ids)}; "
            f"pick one by its id (bondsim runs sweeps lists them), e.g. --sweep {ids[-1]}"
        )

    def sweep_ref(self, sweep_id: int) -> str:
        """What names sweep ``sweep_id`` on the command line: its name if no other sweep has it, else its id."""
        (name,) = self.con.execute("SELECT name FROM sweeps WHERE sweep_id = ?", [int(sweep_id)]).fetchone()
        return name if len(self.matching_sweeps(name)) == 1 and not name.strip().isdigit() else str(sweep_id)

    def add_league(self, name: str, rows: Sequence[dict]) -> int:
        """Stores the rows of a league (``bondsim validate --league``: one per case) under a new league id."""
        import pandas as pd

        with self._transaction():
            have = self.columns("leagues")
            last = self.con.execute("SELECT max(league_id) FROM leagues").fetchall()[0][0] if have else None
            league_id = int(last or 0) + 1
            stamp = pd.Timestamp.now()
            frame = pd.DataFrame([{"league_id": league_id, "league": name, "created_at": stamp, **r} for r in rows])
            self._append("leagues", frame)
        return league_id

    def league(self, ref: str | int | None = None) -> tuple[int, str, pd.DataFrame]:
        """A stored league by its id (None: the latest): its id, name and rows in case order."""
        if not self.columns("leagues"):
            raise BondsimError(f"{self.path}: no league stored here (bondsim validate --league NAME --db stores one)")
        ids = [int(r[0]) for r in self.con.execute("SELECT DISTINCT league_id FROM leagues ORDER BY 1").fetchall()]
        if ref is None:
            league_id = ids[-1]
        elif str(ref).isdigit() and int(ref) in ids:
            league_id = int(ref)
        else:
            raise BondsimError(f"--league: no league {ref} in {self.path} (stored: {', '.join(map(str, ids))})")
        rows = self.con.execute("SELECT * FROM leagues WHERE league_id = ? ORDER BY rowid", [league_id]).df()
        return league_id, str(rows["league"].iloc[0]), rows

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep: its name, points, and how many of them are stored."""
        return self.con.execute(
            """
            SELECT s.sweep_id, s.name, count(p.point) AS points, count(r.run_id) AS stored, s.created_at,
                json_extract_string(s.spec, '$.file') AS file
            FROM sweeps s JOIN sweep_points p USING (sweep_id)
            LEFT JOIN runs r ON r.scenario_hash = p.scenario_hash AND r.version = ?
            GROUP BY ALL ORDER BY s.sweep_id
            """,
            [__version__],
        ).df()

    def runs(self, sweep: str | int | None = None) -> pd.DataFrame:
        """The runs table without its JSON columns; with ``sweep`` (its id or name, see :meth:`sweep_id`),
        that sweep's stored runs in grid order with the swept values as columns."""
        import pandas as pd

        frame = _with_engine(self.con.execute(*self._runs_query(sweep)).df())
        if sweep is None:
            return frame
        labels = pd.DataFrame([json.loads(text) for text in frame.pop("labels")], index=frame.index)
        swept = _swept(labels.columns)
        figures = frame.drop(columns=["point", *(c for c in swept if c in frame.columns)])
        return pd.concat([frame[["point"]], labels[swept], figures], axis=1)

    def run_rows(self, sweep: str | int | None = None, figures: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """:meth:`runs` as plain rows (a dict per run, its columns in the same order), read without pandas; the
        swept values as a DataFrame's columns hold them (:func:`bondsim.api.as_column`). With ``figures``, of the
        summary's figures only those (a report reads a few of a hundred)."""
        cursor = self.con.execute(*self._runs_query(sweep, figures))
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        cells = list(zip(*rows, strict=True)) or [()] * len(names)  # column by column
        labels = [] if sweep is None else [json.loads(text) for text in cells[1]]
        swept = _swept(dict.fromkeys(k for each in labels for k in each))
        header = [] if sweep is None else ["point", *swept]
        columns = [] if sweep is None else [cells[0], *(as_column([each.get(n) for each in labels]) for n in swept)]
        kept = [i for i, name in enumerate(names) if name not in ("point", "labels", *swept)]
        header += [names[i] for i in kept]
        columns += [cells[i] for i in kept]
        if "engine" not in header:
            header.append("engine")
            columns.append([LEGACY_ENGINE] * len(rows))
        return [dict(zip(header, row, strict=True)) for row in zip(*columns, strict=True)]

    def _runs_query(self, sweep: str | int | None, figures: Iterable[str] | None = None) -> tuple[str, list]:
        """The query of :meth:`runs` and :meth:`run_rows`, and its parameters: the runs table's columns but its
        JSON ones, of its figures only ``figures`` if given."""
        shown = "r.* EXCLUDE (scenario, summary)"
        if figures is not None:
            keep = {*RUN_COLUMNS, *figures} - {"scenario", "summary"}
            shown = ", ".join(f"r.{_ident(c)}" for c in self.columns("runs") if c in keep)
        if sweep is None:
            return f"SELECT {shown} FROM runs r ORDER BY run_id", []
        return (
            f"""
            SELECT p.point, p.labels, {shown}
            FROM sweep_points p JOIN runs r ON r.scenario_hash = p.scenario_hash AND r.version = ?
            WHERE p.sweep_id = ? ORDER BY p.point
            """,
            [__version__, self.sweep_id(sweep)],
        )

    def _id_range_error(self, ref: object) -> BondsimError:
        """The error for a run id no run can have (below 1, or beyond what DuckDB's BIGINT holds)."""
        low, high = self.con.execute("SELECT min(run_id), max(run_id) FROM runs").fetchone()
        stored = f"those in {self.path}: {low} to {high}" if low is not None else f"none stored in {self.path} yet"
        return BondsimError(
            f"run id: out of range, run ids are whole numbers from 1 to {MAX_RUN_ID} ({stored}), got {ref}"
        )

    def _checked_ids(self, run_ids: Iterable[Any]) -> list[int]:
        """``run_ids`` as ints, each a whole number DuckDB can compare with a stored id (else the error
        naming it and the range); numpy integers too, e.g. a :meth:`runs` column."""
        ids = []
        for value in run_ids:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise type_error("run id", "a whole number (bondsim runs list shows them)", value)
            if not 1 <= int(value) <= MAX_RUN_ID:
                raise self._id_range_error(value)
            ids.append(int(value))
        return ids

    def resolve(self, ref: str) -> int:
        """A run id from a run id or a scenario hash prefix."""
        text = ref.strip()
        if re.fullmatch(r"-[0-9]+", text) or (re.fullmatch(r"[0-9]+", text) and int(text) > MAX_RUN_ID):
            # no scenario hash has a `-` or is this long: an id out of range
            raise self._id_range_error(text)
        found_id = (
            re.fullmatch(r"[0-9]+", ref)
            and self.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [int(ref)]).fetchone()
        )
        if found_id:
            return int(ref)
        found = self.con.execute(
            # starts_with, not LIKE: a `%` or `_` in what the user typed is a character, not a wildcard
            "SELECT run_id FROM runs WHERE starts_with(scenario_hash, ?) ORDER BY run_id",
            [ref.lower()],
        ).fetchall()
        if len(ref) >= 4 and len(found) == 1:
            return found[0][0]
        if len(found) > 1 and len(ref) >= 4:
            ids = ", ".join(str(r[0]) for r in found)
            raise BondsimError(f"{ref}: several runs have a scenario hash starting so (run ids {ids}); give more")
        raise BondsimError(f"{ref}: no run with that id or scenario hash (prefix of 4+ characters) in {self.path}")

    def export(self, out: Path, fmt: str, sweep: str | int | None = None) -> list[Path]:
        """Writes ``runs`` (with swept values if ``sweep``) and every per-run table to ``out`` as
        Parquet or CSV; returns the files written. All of them or none (:mod:`bondsim.atomic`): an
        ``OSError`` naming the file that could not be written and why."""
        from bondsim import atomic

        if fmt not in ("parquet", "csv"):
            raise BondsimError(f"format: parquet or csv, got {fmt!r}")
        runs = self.runs(sweep)  # a sweep not found is an error before anything is made
        options = "FORMAT PARQUET" if fmt == "parquet" else "FORMAT CSV, HEADER"
        self.con.register("selected", runs[["run_id"]])
        try:
            self.con.register("runs_out", runs)
            queries = {"runs": "SELECT * FROM runs_out"}
            for kind in self.table_kinds():
                queries[kind] = (
                    f"SELECT t.* FROM {_ident(kind)} t SEMI JOIN selected s ON t.run_id = s.run_id "
                    "ORDER BY t.run_id, t.rowid"
                )
            with atomic.staged() as files:
                return [
                    files.write(out / f"{kind}.{fmt}", lambda path, q=query: self._copy(q, path, options))
                    for kind, query in queries.items()
                ]
        finally:
            self.con.unregister("selected")
            self.con.unregister("runs_out")

    def _copy(self, query: str, path: Path, options: str) -> None:
        """``COPY (query) TO path``; DuckDB's failure to write as the ``OSError`` it reports."""
        target = path.as_posix().replace("'", "''")
        try:
            self.con.execute(f"COPY ({query}) TO '{target}' ({options})")
        except duckdb.IOException as exc:
            raise _duckdb_os_error(exc) from exc


def _duckdb_os_error(exc: duckdb.IOException) -> OSError:
    """DuckDB's I/O error as an ``OSError``: with the ``errno`` it reports and its ``strerror``, e.g. "No
    space left on device" (DuckDB 2.0 puts the operating system's error into the message as JSON, on a full
    disk ``... "exception_message":"Could not write file ...","errno":"28"}``); else the message's first
    line."""
    text = str(exc)
    found = re.search(r'"errno"\s*:\s*"?(\d+)', text)
    if found:
        code = int(found[1])
        return OSError(code, os.strerror(code))
    return OSError(None, text.splitlines()[0])
