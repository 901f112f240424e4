"""Running many scenarios: on local cores or a Dask cluster, optionally stored in a results database.

Three ways in, one machinery (:class:`Runner`):

* :func:`run_many` — scenario dicts in, :class:`~bondsim.api.RunResult` list out, in input order.
  Every reproduction runs its experiments through it.
* :func:`sweep` — a sweep file (or dict, see :mod:`bondsim.grid`) in, a DataFrame out: one row per
  run in grid order with the swept values and every scalar summary figure. The package exports it
  as ``bondsim.sweep(...)``.
* :func:`session` — a block in which every ``run_many`` / ``sweep`` shares one pool, Dask cluster
  and database (``bondsim reproduce --dask local --db results.duckdb`` uses it).

Every scenario is checked before any run starts. Runs execute on a local thread pool (the core
releases the GIL, so threads use every core and cost no process start or pickling) or on Dask's
distributed scheduler; either way results come back to this process, which alone writes the
database, one transaction per batch of completed runs. A run already stored (same scenario hash,
same bondsim version) is not run again; the core is deterministic, so whichever executor ran a
scenario, its results are the same. Between two commits the database is let go, so that other
processes (``bondsim runs list``) can read it while a sweep runs.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
import json
import numbers
import os
import queue
import statistics
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bondsim import _core, budget
from bondsim._core import BondsimError
from bondsim.api import RunResult, decode_output, encode_output
from bondsim.grid import Listed, Point, Points, Sweep, load_sweep
from bondsim.progress import Bar as _Bar
from bondsim.scenario import check, scenario_hash, type_error
from bondsim.store import Store, scalar_figures

#: Runs that finish within this many seconds of the last commit share the next one (one transaction
#: costs milliseconds); a run finishing later is committed at once. A killed sweep loses at most the
#: runs in flight and those finished since the last commit: a quarter second, or longer where commits
#: are slow (:data:`FLUSH_SHARE`).
FLUSH_EVERY_S = 0.25

#: The share of a sweep's time its commits may take: after a commit that took ``d`` seconds the next
#: waits at least ``d / FLUSH_SHARE``. (A commit opens the database, appends each table and lets go of
#: the file, so that readers may open it: 0.1-0.4 s for a few dozen TCP runs, measured 2026-11-30;
#: every quarter second it was most of a sweep of short runs.)
FLUSH_SHARE = 0.1

#: Runs handed to each worker ahead of their results (:meth:`Runner.execute`), and the workers a Dask
#: cluster is taken to have at least when sizing that (its own count is not asked for).
IN_FLIGHT_PER_WORKER = 4
DASK_MIN_WORKERS = 64


#: What a user who asks for Dask (``--dask``, ``dask=``) without the optional extra is told.
DASK_MISSING = "--dask: running on Dask needs the dask extra, which is not installed: pip install 'bondsim[dask]'"


def import_distributed():
    """``dask.distributed``, an optional dependency (the ``bondsim[dask]`` extra), imported only when
    Dask is asked for; a :class:`~bondsim.BondsimError` saying how to install it if it is missing."""
    try:
        import distributed
    except ImportError as exc:
        if exc.name in ("dask", "distributed") or (exc.name or "").startswith("dask."):
            raise BondsimError(DASK_MISSING) from None
        raise BondsimError(f"--dask: cannot import dask.distributed: {exc}") from None
    return distributed


def _run_arrow(texts: list[str], force: bool = False) -> list[tuple[str, dict[str, bytes]]]:
    """A Dask worker's job: checked scenarios (JSON) in, each one's summary (JSON) and tables (Arrow IPC
    bytes, picklable) out, within the worker's memory budget unless ``force``."""
    return [encode_output(*_core.run(text, None, None, budget.resident_limit(force))) for text in texts]


#: A Dask task carries runs for about this many seconds (from the runs done so far), at most
#: :data:`DASK_BATCH_MAX` of them: a task costs the scheduler, the network and the result's return some
#: milliseconds whatever it carries (16-21 ms a run with one run a task, on a LocalCluster of 2 workers,
#: measured 2026-11-30), so short runs travel several to a task. The first runs go one to a task.
DASK_TASK_S = 0.2
DASK_BATCH_MAX = 64


class _Cancelled(Exception):
    """Stops a local run at its next progress report."""


#: Seconds to wait for a Dask scheduler to answer before giving up with an error.
CONNECT_TIMEOUT_S = 10


def _scheduler_address(path: Path) -> str:
    """The scheduler address in a Dask scheduler file (``dask scheduler --scheduler-file PATH``)."""
    start = f"start a scheduler with `dask scheduler --scheduler-file {path}`"
    if not path.is_file():
        raise BondsimError(f"--dask: scheduler file {path} does not exist ({start}, or give tcp://host:port)")
    try:
        address = json.loads(path.read_text())["address"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BondsimError(
            f"--dask: {path} is not a Dask scheduler file (no scheduler address in it: {exc}); {start}"
        ) from None
    if not isinstance(address, str):
        raise BondsimError(f"--dask: {path} is not a Dask scheduler file (its address is {address!r}); {start}")
    return address


def local_cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class Outcome:
    """A finished run: its result (None when only its summary was kept), summary, database id, and
    whether it ran now (else it was already stored)."""

    result: RunResult | None
    summary: dict
    run_id: int | None
    fresh: bool


class Runner:
    """Where runs execute and land.

    ``workers``: local threads, or the LocalCluster's worker processes (default: every core).
    ``dask``: None (local threads), ``"local"`` (a Dask LocalCluster), a scheduler address
    (``tcp://host:8786``), a scheduler file (``*.json``), or a ``distributed.Client`` or cluster
    object (e.g. dask-jobqueue's ``SLURMCluster``). Dask is optional (``pip install 'bondsim[dask]'``)
    and imported only when asked for.
    ``db``: a results database path or :class:`~bondsim.store.Store`; None keeps results in memory.
    The pool, cluster and database open on first use and close with the runner.
    """

    def __init__(
        self, *, workers: int | None = None, dask: Any = None, db: str | Path | Store | None = None, force: bool = False
    ):
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral)):
            raise type_error("workers", "a whole number of local threads, 1 or more, or None (every core)", workers)
        if workers is not None and workers < 1:
            raise BondsimError(f"--workers: must be 1 or more, got {workers}")
        if db is not None and not isinstance(db, str | os.PathLike | Store):
            raise type_error("db", "a results database: a DuckDB file (str or Path), a Store, or None", db)
        if dask is not None:
            import_distributed()  # before anything is run or recorded
        self.workers = workers or local_cores()
        self.dask = dask
        self.db = db
        #: Run even a job estimated above the budget (:mod:`bondsim.budget`).
        self.force = force
        self._store: Store | None = db if isinstance(db, Store) else None
        self._pool = None
        self._client = None
        self._own_client = False
        self._cluster = None
        self._cancel = threading.Event()
        #: The outcomes of the points :meth:`execute` was last given, as they come (stored ones included):
        #: what a stopped sweep has to show.
        self.outcomes: dict[str, Outcome] = {}

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stops the pool or cluster (cancelling runs in flight) and closes the database."""
        self._cancel.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._client is not None and self._own_client:
            self._client.close()
        self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        if self._store is not None and not isinstance(self.db, Store):
            self._store.close()
        self._store = None

    @property
    def store(self) -> Store | None:
        """The results database, opened on first use (None without ``db``)."""
        if self._store is None and self.db is not None:
            self._store = Store(self.db)
        return self._store

    def dask_client(self):
        """The ``distributed.Client`` of ``dask``, connected (or its LocalCluster started) on first use."""
        if self._client is not None:
            return self._client
        distributed = import_distributed()
        target = self.dask
        try:
            if isinstance(target, distributed.Client):
                self._client = target
                return target
            if target == "local":
                self._cluster = distributed.LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=":0"
                )
                self._client = distributed.Client(self._cluster)
            elif isinstance(target, str | Path) and str(target).endswith(".json"):
                # distributed waits for a missing scheduler file to appear, for ever: look first
                self._client = distributed.Client(_scheduler_address(Path(target)), timeout=CONNECT_TIMEOUT_S)
            else:
                self._client = distributed.Client(target, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise BondsimError(f"--dask: cannot reach a Dask scheduler at {target}: {reason}") from None
        self._own_client = True
        return self._client

    def _submit(self, batch: list[tuple[str, dict]], done: queue.Queue, partial: dict[str, float]):
        """Hands ``batch`` (scenario hash, scenario) to the executor: locally one run (a batch of one) to a
        thread, on Dask as one task; ``done`` hears ``(hashes, future)`` when it ends, and the future's result
        is the runs' outputs in order (locally, the one run's)."""
        if self.dask is not None:
            keys, texts = [k for k, _ in batch], [json.dumps(scenario) for _, scenario in batch]
            # Dask keeps one result per task key: the key names every run of the batch, so that another
            # batch (of another sweep on the same cluster) that starts with the same run is another task
            named = hashlib.sha256(" ".join(keys).encode()).hexdigest()[:24]
            future = self.dask_client().submit(_run_arrow, texts, self.force, key=f"bondsim-runs-{named}")
            future.add_done_callback(lambda f: done.put((keys, f)))
            return future
        ((key, scenario),) = batch
        text = json.dumps(scenario)
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="bondsim-run")
        cancel = self._cancel

        def progress(done_packets: int, total_packets: int, _sim_s: float) -> None:
            if cancel.is_set():
                raise _Cancelled
            partial[key] = done_packets / total_packets if total_packets else 0.0

        def run() -> list:
            return [_core.run(text, progress, None, budget.resident_limit(self.force))]

        future = self._pool.submit(run)
        future.add_done_callback(lambda f: done.put(([key], f)))
        return future

    def _in_flight(self) -> int:
        """How many runs are handed to the executor ahead of their results: enough to keep every worker
        busy, few enough that a sweep of millions holds only these scenarios at once."""
        return IN_FLIGHT_PER_WORKER * (self.workers if self.dask is None else max(self.workers, DASK_MIN_WORKERS))

    def execute(
        self,
        points: Sequence[Point],
        *,
        name: str | None = None,
        spec: Mapping | None = None,
        progress: bool = True,
        keep_results: bool = True,
    ) -> dict[str, Outcome]:
        """Runs every point not already stored; returns an outcome per scenario hash.

        ``points``: a :class:`~bondsim.grid.Points` (a sweep's :class:`~bondsim.grid.Grid`, whose scenarios
        are made as they are handed to a worker, :data:`IN_FLIGHT_PER_WORKER` per worker at a time) or a list.
        With a database, the grid is recorded under ``name`` (if given) and completed runs are
        committed as they arrive (see :data:`FLUSH_EVERY_S`). ``keep_results=False`` keeps only
        summaries in memory.
        """
        self._cancel.clear()
        if self.dask is not None:
            self.dask_client()  # a scheduler that cannot be reached is an error before anything is recorded
        points = points if isinstance(points, Points) else Listed(points)
        order = points.distinct()  # the first point of each scenario
        outcomes: dict[str, Outcome] = {}
        self.outcomes = outcomes
        store = self.store
        stored = store.stored(points.key(i) for i in order) if store is not None else {}
        # what is left to run must fit the budget, before anything is recorded
        left = [i for i in order if points.key(i) not in stored]
        budget.check(
            (points.scenario(i) for i in left),
            workers=self.workers,
            force=self.force,
            what="this sweep",
            total=len(left),
        )
        if store is not None:
            if name:
                store.add_sweep(name, dict(spec or {}), points.rows)
            if keep_results:
                loaded = store.load(list(stored.values()))
                outcomes = {k: Outcome(loaded[i], loaded[i].summary, i, False) for k, i in stored.items()}
            else:
                known = store.summaries(list(stored.values()))
                outcomes = {k: Outcome(None, known[i], i, False) for k, i in stored.items()}
            self.outcomes = outcomes
            store.release()  # readers (bondsim runs list) may open the file between commits
        bar = _Bar(name or "runs", len(left), progress, f" ({len(outcomes)} already stored)" if outcomes else "")
        self._run(points, left, outcomes, store, bar, keep_results)
        return outcomes

    def _run(self, points, todo, outcomes, store, bar, keep_results) -> None:
        """Runs the points ``todo`` (indices into ``points``), at most :meth:`_in_flight` at a time (times the
        runs a Dask task carries), into ``outcomes`` and the database, committing every
        :data:`FLUSH_EVERY_S` or less often where commits are slow (:data:`FLUSH_SHARE`)."""
        done: queue.Queue = queue.Queue()
        partial: dict[str, float] = {}
        ahead = iter(todo)
        futures: dict[str, Any] = {}
        running: dict[str, dict] = {}  # scenario hash -> the scenario, until its result is committed
        pending: dict[str, tuple] = {}  # finished, not yet stored: scenario hash -> (summary JSON, tables)
        flushed = time.monotonic()
        commit = {"gap_s": FLUSH_EVERY_S, "batch": 1}  # the time between commits; the runs a task carries (Dask)

        def top_up() -> None:
            while len(futures) < self._in_flight() * commit["batch"]:  # runs, not tasks
                batch = [(points.key(i), points.scenario(i)) for i in itertools.islice(ahead, commit["batch"])]
                if not batch:
                    return
                running.update(batch)
                future = self._submit(batch, done, partial)
                futures.update((key, future) for key, _ in batch)

        def flush() -> None:
            now = time.monotonic()
            outputs = {key: decode_output(*value) for key, value in pending.items()}
            if store is not None:
                try:
                    ids = store.add([(key, running[key], output) for key, output in outputs.items()])
                finally:
                    store.release()
            else:
                ids = [None] * len(outputs)
            for (key, output), run_id in zip(outputs.items(), ids, strict=True):
                result = RunResult.from_output(running[key], output) if keep_results else None
                outcomes[key] = Outcome(result, output["summary"], run_id, True)
                del running[key]
            bar.update(bar.done + len(pending), sum(partial.values()))
            pending.clear()
            commit["gap_s"] = max(FLUSH_EVERY_S, (time.monotonic() - now) / FLUSH_SHARE)
            if self.dask is not None:
                run_s = statistics.fmean(output["summary"].get("wall_s") or 0.0 for output in outputs.values())
                commit["batch"] = min(DASK_BATCH_MAX, max(1, int(DASK_TASK_S / max(run_s, 1e-6))))

        try:
            top_up()
            while futures or pending:
                wait = commit["gap_s"] - (time.monotonic() - flushed) if pending else 0.2
                try:
                    keys, future = done.get(timeout=max(wait, 0.0))
                    for key, output in zip(keys, future.result(), strict=True):
                        pending[key] = output
                        del futures[key]
                        partial.pop(key, None)
                    top_up()
                except queue.Empty:
                    if not pending:
                        bar.update(bar.done, sum(partial.values()))
                if pending and (not futures or time.monotonic() - flushed >= commit["gap_s"]):
                    flush()
                    flushed = time.monotonic()
        except BaseException:
            self._cancel.set()
            for future in set(futures.values()):
                future.cancel()
            if pending:  # stopped (Ctrl-C, a failed run): keep what did finish
                with contextlib.suppress(Exception):
                    flush()
            raise
        finally:
            bar.close()


_session: contextvars.ContextVar[Runner | None] = contextvars.ContextVar("bondsim_session", default=None)


@contextlib.contextmanager
def session(*, workers: int | None = None, dask: Any = None, db: str | Path | Store | None = None) -> Iterator[Runner]:
    """A block in which every :func:`run_many` and :func:`sweep` that names no executor or database of its
    own shares this one (see :class:`Runner` for the arguments)::

        with bondsim.sweeps.session(dask="local", db="results.duckdb"):
            bondsim.reproduce.thesis.reproduce("out/thesis")
    """
    with Runner(workers=workers, dask=dask, db=db) as runner:
        token = _session.set(runner)
        try:
            yield runner
        finally:
            _session.reset(token)


@contextlib.contextmanager
def _runner(workers: int | None, dask: Any, db: Any, force: bool = False) -> Iterator[Runner]:
    current = _session.get()
    if current is not None and workers is None and dask is None and db is None and not force:
        yield current
    else:
        with Runner(workers=workers, dask=dask, db=db, force=force) as runner:
            yield runner


def run_many(
    docs: Sequence[Mapping],
    *,
    labels: Sequence[Mapping] | None = None,
    name: str | None = None,
    progress: bool = True,
    workers: int | None = None,
    dask: Any = None,
    db: str | Path | Store | None = None,
    force: bool = False,
) -> list[RunResult]:
    """Runs every scenario dict in parallel; returns the results in the order of ``docs``.

    Every scenario is checked before any run starts. ``labels`` (one dict per scenario) and ``name``
    record the runs as a sweep in the database; ``workers``, ``dask`` and ``db`` as for
    :class:`Runner` (default: the current :func:`session`'s, else every local core, no database); a job
    estimated above the budget (:mod:`bondsim.budget`) is refused unless ``force``.
    """
    docs = list(docs)
    labels = [dict(label) for label in labels] if labels is not None else [{} for _ in docs]
    if len(labels) != len(docs):
        raise ValueError(f"run_many: {len(docs)} scenarios but {len(labels)} labels")
    points = []
    for index, (doc, label) in enumerate(zip(docs, labels, strict=True)):
        checked = check(doc)
        points.append(Point(index=index, labels=label, scenario=checked, key=scenario_hash(checked)))
    with _runner(workers, dask, db, force) as runner:
        outcomes = runner.execute(points, name=name, spec={"labels": labels} if name else None, progress=progress)
    return [outcomes[p.key].result for p in points]


def summaries(results: Iterable[RunResult], labels: Iterable[Mapping]) -> pd.DataFrame:
    """One row per run: its labels (the swept values) beside its summary figures."""
    rows = []
    for result, label in zip(results, labels, strict=True):
        rows.append({**label, **scalar_figures(result.summary)})
    return pd.DataFrame(rows)


def sweep_table(plan: Sweep, outcomes: Mapping[str, Outcome]) -> pd.DataFrame:
    """One row per point of ``plan`` in grid order: point, swept values, seed, scenario hash, run id
    (when stored) and every scalar summary figure."""
    rows = []
    for index, key, _, labels in plan.points.rows:
        outcome = outcomes[key]
        row: dict[str, Any] = {"point": index, **labels, "scenario_hash": key}
        if outcome.run_id is not None:
            row["run_id"] = outcome.run_id
        for key, value in scalar_figures(outcome.summary).items():
            row.setdefault(key, value)
        rows.append(row)
    return pd.DataFrame(rows)


def sweep(
    spec: str | Path | Mapping | Sweep,
    overrides: Iterable[str] = (),
    *,
    progress: bool = True,
    workers: int | None = None,
    dask: Any = None,
    db: str | Path | Store | None = None,
    force: bool = False,
) -> pd.DataFrame:
    """Runs a sweep (a ``*.sweep.toml`` file, a shipped one's name like ``thesis_load``, a dict in its layout,
    where ``axes`` may also be ``{path: values}``, or a loaded :class:`~bondsim.grid.Sweep`); returns one row
    per run in grid order.

    >>> bondsim.sweep({"base": "thesis", "axes": {"bond.mode": ["rr", "lb"]}, "replications": 2})  # doctest: +SKIP

    ``overrides`` (``path=value``) change the base scenario; ``workers``, ``dask`` and ``db`` as for
    :class:`Runner`. With ``db``, runs already stored are not run again. A sweep estimated above the budget
    (:mod:`bondsim.budget`) is refused unless ``force``.
    """
    plan = spec if isinstance(spec, Sweep) else load_sweep(spec, overrides, progress=progress, force=force)
    with _runner(workers, dask, db, force) as runner:
        outcomes = runner.execute(plan.points, name=plan.name, spec=plan.spec, progress=progress, keep_results=False)
    return sweep_table(plan, outcomes)
