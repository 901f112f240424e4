"""The Python API: run a scenario, get its summary and tables."""

from __future__ import annotations

import contextlib
import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim import _core, budget
from bondsim import scenario as scenario_mod

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

ProgressFn = Callable[[int, int, float], None]

#: Packet captures: a directory, or ``{"dir": ..., "payload": bool, "max_packets": int, "start_s": float,
#: "stop_s": float}`` (docs/captures.md).
PcapSpec = str | Path | Mapping[str, Any]


@functools.cache
def schemas() -> dict[str, pa.Schema]:
    """Every table's Arrow schema as the core defines it (``_core.schemas()``): ``summary`` (the summary's scalar
    figures), ``requests``, ``links``, then :attr:`RunResult.TRACES`."""
    return {name: _read(table).schema for name, table in _core.schemas().items()}


def _read(table: Any) -> pa.Table:
    """A table the core handed over (``_core.Table``: Arrow through ``__arrow_c_stream__``) as a pyarrow table,
    its buffers not copied."""
    import pyarrow as pa

    return pa.RecordBatchReader.from_stream(table).read_all()


def arrow_table(kind: str, table: Any) -> pa.Table:
    """A table (the core's, a pyarrow table, a DataFrame, or ``{column: [values]}`` as the emulator gives it) as
    a pyarrow table, its columns typed as the core's schema of ``kind`` types them (a column the schema lacks as
    pyarrow reads it; one of nothing but nulls as double, as stored)."""
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table
    if isinstance(table, _core.Table):
        return _read(table)
    schema = schemas().get(kind, pa.schema([]))
    if isinstance(table, Mapping):

        def column(name: str, values: list) -> pa.Array:
            if name in schema.names:
                return pa.array(values, type=schema.field(name).type)
            values = pa.array(values)
            return values.cast(pa.float64()) if pa.types.is_null(values.type) else values

        return pa.table({c: column(c, v) for c, v in table.items()})
    # a DataFrame (read back from a database or CSV): NaN is null, a column as the schema types it
    out = pa.Table.from_pandas(table, preserve_index=False)
    for i, name in enumerate(out.column_names):
        if name in schema.names and out.schema.field(i).type != schema.field(name).type:
            with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
                out = out.set_column(i, name, out.column(i).cast(schema.field(name).type))
    return out


def decode_output(summary: str, tables: Mapping[str, Any]) -> dict:
    """The core's output (``_core.run``'s summary JSON and ``{name: table}``, each the core's ``_core.Table`` or,
    from a Dask worker, Arrow IPC bytes) as ``{"summary": dict, name: table}`` (IPC bytes read as pyarrow
    tables, the core's tables left as they are: read when asked for)."""

    def table(value: Any) -> Any:
        if isinstance(value, bytes):
            import pyarrow as pa

            return pa.ipc.open_stream(value).read_all()
        return value

    return {"summary": json.loads(summary), **{k: table(v) for k, v in tables.items()}}


def encode_output(summary: str, tables: Mapping[str, Any]) -> tuple[str, dict[str, bytes]]:
    """``_core.run``'s output with each table as Arrow IPC bytes: what a Dask worker sends back (picklable)."""
    import pyarrow as pa

    out = {}
    for name, value in tables.items():
        table = arrow_table(name, value)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        out[name] = sink.getvalue().to_pybytes()
    return summary, out


class RunResult:
    """One run: the checked scenario, whole-run figures, and per-request / per-link tables.

    A run's tables come from the core as Arrow (``_core.Table``), read as pyarrow tables (:meth:`arrow`) and
    DataFrames when first asked for (most sweeps only need the summary), without copying their numeric columns;
    :meth:`write` writes them without pyarrow or pandas.
    """

    #: The files :meth:`write` always writes.
    FILES = ("summary.json", "requests.csv", "links.csv", "scenario.json", "process.txt")
    #: Tables a run has only when its scenario asked for them (``sender.trace_ms``, ``[trace]``) or, for
    #: ``failovers``, when a link can fail; each written as ``NAME.csv``.
    TRACES = ("tcp_trace", "link_trace", "link_events", "packet_trace", "failovers", "mptcp_subflows")

    def __init__(self, scenario: dict, summary: dict, requests=None, links=None, **traces):
        unknown = set(traces) - set(self.TRACES)
        if unknown:
            raise TypeError(f"unknown tables: {sorted(unknown)}")
        self.scenario = scenario
        self.summary = summary
        self._tables = {"requests": requests, "links": links, **{k: traces.get(k) for k in self.TRACES}}
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_output(cls, scenario: dict, output: dict) -> RunResult:
        """From the core's decoded output (``summary``, and tables as the core's, pyarrow tables or
        ``{column: [values]}``)."""
        traces = {k: output.get(k) for k in cls.TRACES}
        return cls(scenario, output["summary"], output["requests"], output["links"], **traces)

    @classmethod
    def read(cls, run_dir: str | Path) -> RunResult:
        """A run written by :meth:`write` (``bondsim run --out``), with whichever trace tables it has; a
        :class:`~bondsim.BondsimError` naming the directory and what is wrong if it holds no such run."""
        import pandas as pd

        run_dir = Path(run_dir)

        def bad(reason: str) -> _core.BondsimError:
            return _core.BondsimError(f"{run_dir}: not a run directory ({reason}; bondsim run --out writes one)")

        if not run_dir.is_dir():
            raise bad("not a directory")
        docs = {}
        for name in ("scenario.json", "summary.json"):
            try:
                docs[name] = json.loads((run_dir / name).read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise bad(f"no {name}") from None
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise bad(f"{name}: {str(exc).splitlines()[0]}") from None
            if not isinstance(docs[name], dict):
                raise bad(f"{name} holds no JSON object")
        tables = {}
        for kind in ("requests", "links", *cls.TRACES):
            path = run_dir / f"{kind}.csv"
            whole = kind in ("requests", "links")  # every run has them, with their header at least
            if not path.exists() and not whole:
                continue
            try:
                size = path.stat().st_size
                if whole and size <= 1:
                    raise bad(f"{kind}.csv is empty")
                tables[kind] = pd.read_csv(path) if size > 1 else pd.DataFrame()
            except FileNotFoundError:
                raise bad(f"no {kind}.csv") from None
            except (OSError, UnicodeDecodeError, ValueError) as exc:  # pandas' parse errors are ValueErrors
                raise bad(f"{kind}.csv: {str(exc).splitlines()[0]}") from None
        return cls(docs["scenario.json"], docs["summary.json"], **tables)

    @classmethod
    def from_json(cls, scenario: dict, text: str) -> RunResult:
        """From the core's output as JSON text."""
        return cls.from_output(scenario, json.loads(text))

    def output(self) -> dict:
        """The result as the core's decoded output (``summary`` and tables as pyarrow tables), the form
        :meth:`bondsim.store.Store.add` stores."""
        out: dict[str, Any] = {"summary": self.summary}
        for kind, value in self._tables.items():
            if value is not None:
                out[kind] = self.arrow(kind)
        return out

    def arrow(self, kind: str) -> pa.Table | None:
        """The table ``kind`` (``requests``, ``links`` or one of :attr:`TRACES`) as a pyarrow table, None if the
        run has no such table."""
        value = self._tables[kind]
        if value is None:
            return None
        table = self._tables[kind] = arrow_table(kind, value)
        return table

    def _table(self, kind: str) -> pd.DataFrame:
        import pandas as pd

        if kind not in self._frames:
            value = self._tables[kind]
            if isinstance(value, pd.DataFrame):
                self._frames[kind] = _nulls_as_numbers(value)
            elif value is None or isinstance(value, Mapping):
                self._frames[kind] = _table(value or {})
            else:  # Arrow: numeric columns without nulls are not copied
                self._frames[kind] = _nulls_as_numbers(self.arrow(kind).to_pandas(split_blocks=True))
        return self._frames[kind]

    def columns(self, kind: str) -> dict[str, list] | None:
        """The table ``kind`` as ``{column: [values]}``, None if the run has no such table: as it was read where it
        is so (:meth:`bondsim.store.Store.load` with ``plain``, the emulator), without pandas or pyarrow (numbers
        as a DataFrame holds them: :func:`as_column`); else from its DataFrame."""
        value = self._tables[kind]
        if value is None:
            return None
        if isinstance(value, Mapping):
            return {name: as_column(values) for name, values in value.items()}
        frame = self._table(kind)
        return {name: frame[name].tolist() for name in frame.columns}

    @property
    def requests(self) -> pd.DataFrame:
        """One row per request (flow)."""
        return self._table("requests")

    @property
    def links(self) -> pd.DataFrame:
        """One row per link."""
        return self._table("links")

    def trace(self, kind: str) -> pd.DataFrame | None:
        """One of :attr:`TRACES`, or None unless the scenario asked for it."""
        if kind not in self.TRACES:
            raise _core.BondsimError(f"{kind!r}: no such trace; traces: {', '.join(self.TRACES)}")
        if self._tables[kind] is None:
            return None
        return self._table(kind)

    @property
    def tcp_trace(self) -> pd.DataFrame | None:
        """TCP connections sampled over time (``sender.trace_ms``): t_s, flow, cwnd, ssthresh, srtt_us,
        in_flight, acked, retransmits, reordering, state; None unless the scenario asked for it."""
        return self.trace("tcp_trace")

    @property
    def link_trace(self) -> pd.DataFrame | None:
        """Per link and time bucket (``trace.link_ms``, decimated past ``trace.link_buckets``): t_s (the
        bucket's end), width_s, link, wire_bytes, utilisation, queue_pkts, queue_max_pkts, carrier, up."""
        return self.trace("link_trace")

    @property
    def link_events(self) -> pd.DataFrame | None:
        """Every change of a link's carrier or the monitor's verdict (with ``trace.link_ms``): t_s, link,
        carrier, up."""
        return self.trace("link_events")

    @property
    def packet_trace(self) -> pd.DataFrame | None:
        """The first ``trace.packets`` packets in bond order: packet, flow, seq, retransmit, handshake, link, sent_s,
        left_s, arrived_s, out_of_order (on the clients' wire)."""
        return self.trace("packet_trace")

    @property
    def data_packet_trace(self) -> pd.DataFrame | None:
        """:attr:`packet_trace` without the TCP handshake's rows (data only, as the emulator traces)."""
        packets = self.packet_trace
        if packets is None or "handshake" not in packets.columns:
            return packets
        return packets[~packets["handshake"].astype(bool)].reset_index(drop=True)

    @property
    def failovers(self) -> pd.DataFrame | None:
        """One row per failure of a link (runs whose links can fail): link, name, kind, down_at_s, up_at_s,
        detected_at_s, detection_ms, switchover_ms (seed 003's flow switch-over time, median over the flows
        that switched), switchover_ms_max, switchover_flows, lost_queue_full, lost_link_down, lost_no_link,
        lost_random, lost_silent, lost_switch_port, tcp_stall_ms, rtos, spurious_rtos, window_s, throughput_bps
        (docs/failures.md, "Failover")."""
        return self.trace("failovers")

    @property
    def mptcp_subflows(self) -> pd.DataFrame | None:
        """One row per MPTCP subflow (its link), summed over the connections (``sender.kind = "mptcp"``): link,
        backup, established (connections whose subflow there completed its handshake), segments (first
        transmissions), retransmits; None for other senders."""
        return self.trace("mptcp_subflows")

    @property
    def files(self) -> list[str]:
        """The files :meth:`write` writes for this run."""
        return [*self.FILES, *(f"{k}.csv" for k in self.TRACES if self._tables[k] is not None)]

    def __repr__(self) -> str:
        return f"RunResult(scheduler={self.summary.get('scheduler')!r}, seed={self.summary.get('seed')!r})"

    def write(self, out: str | Path) -> Path:
        """Writes ``summary.json``, ``requests.csv``, ``links.csv``, ``scenario.json`` and ``process.txt``
        (the thesis's ``process.sh`` table) into ``out``, and ``NAME.csv`` for each of :attr:`TRACES` the
        run recorded; an earlier run's ``NAME.csv`` of a trace this run did not record is removed, so
        that the directory holds one run. Whole or not at all (:mod:`bondsim.atomic`): if a file cannot be
        written, an earlier run's files there are left as they were and none of this run's is."""
        from bondsim import atomic
        from bondsim.stats import format_process_table, process_rows

        out = Path(out)
        with atomic.staged() as files:
            files.write_text(out / "summary.json", json.dumps(self.summary, indent=2) + "\n")
            files.write_text(out / "scenario.json", json.dumps(self.scenario, indent=2) + "\n")
            for kind in ("requests", "links", *self.TRACES):
                value, path = self._tables[kind], out / f"{kind}.csv"
                if value is None and kind in self.TRACES:
                    files.remove(path)
                elif isinstance(value, Mapping) or value is None:
                    files.write(path, lambda p, v=value: _write_csv(p, v or {}))  # as the run left it: no pandas
                elif hasattr(value, "to_pydict"):  # the core's table (no pyarrow loaded), or a pyarrow table
                    files.write(path, lambda p, v=value: _write_csv(p, v.to_pydict()))
                else:
                    files.write(path, lambda p, v=value: v.to_csv(p, index=False))
            requests = self._tables["requests"]
            if requests is None:
                requests = {}
            elif isinstance(requests, _core.Table):
                requests = requests.to_pydict(["packets", "out_of_order"])
            elif hasattr(requests, "to_pydict"):  # a pyarrow table
                requests = requests.select([c for c in ("packets", "out_of_order") if c in requests.column_names])
                requests = requests.to_pydict()
            elif not isinstance(requests, Mapping):  # a DataFrame (read back): its two columns
                requests = {c: requests[c].tolist() for c in ("packets", "out_of_order") if c in requests.columns}
            rows = process_rows(requests.get("packets", []), requests.get("out_of_order", []))
            files.write_text(out / "process.txt", format_process_table(rows) + "\n")
        return out


def _csv_cells(values: list) -> list[str]:
    """A column's cells as pandas writes them (``to_csv``) for :func:`_table` of the same column, so that a
    run's files are the same bytes with or without pandas loaded: a column of numbers with a float or a
    null among them is float64 (each value written as ``repr`` of the float, a null or NaN as nothing),
    any other column is written value by value with ``str`` (ints, booleans, strings; a null or NaN as
    nothing)."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float} and (float in kinds or not kinds or None in values):
        return ["" if v is None or v != v else repr(float(v)) for v in values]
    return ["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in values]


def _write_csv(path: Path, columns: dict[str, list]) -> None:
    """Writes ``{column: values}`` as ``_table(columns).to_csv(path, index=False)`` would (csv's minimal
    quoting, ``\\n`` line ends), without pandas."""
    import csv

    cells = [_csv_cells(list(values)) for values in columns.values()]
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, lineterminator="\n")
        if not columns:
            file.write("\n")  # pandas writes an empty table as one empty line
            return
        writer.writerow(columns)
        writer.writerows(zip(*cells, strict=True))


def _table(columns: dict[str, list]) -> pd.DataFrame:
    """A table from ``{column: values}``; a column of nothing but nulls is numeric (NaN), as stored."""
    import pandas as pd

    return _nulls_as_numbers(pd.DataFrame(columns))


def as_column(values: list) -> list:
    """``values`` as a DataFrame's column holds them, so that plain columns give the numbers DataFrames gave:
    whole numbers beside fractions or nulls as floats, a null among numbers (or among nulls alone) as NaN."""
    kinds = set(map(type, values))
    nulls = type(None) in kinds
    kinds.discard(type(None))
    if kinds - {int, float} or (not nulls and len(kinds) < 2):
        return values  # words (or flags) beside nulls, or numbers of one kind
    return [math.nan if v is None else float(v) for v in values]


def _nulls_as_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column of nothing but nulls numeric (NaN), as stored (text columns too: a run whose
    congestion control has no mode of its own)."""
    for name in frame.columns:
        if frame[name].dtype.kind not in "biufcmM" and frame[name].isna().all():
            frame[name] = frame[name].astype(float)
    return frame


def run(
    scenario: str | Path | Mapping[str, Any],
    overrides: Iterable[str] = (),
    *,
    progress: ProgressFn | None = None,
    pcap: PcapSpec | None = None,
    force: bool = False,
) -> RunResult:
    """Runs a scenario (TOML path, a shipped one's name like ``thesis``, or dict) with optional ``path=value``
    overrides; ``pcap`` writes packet captures (pcapng) of the run into a directory (a path, or a dict of
    capture options). A run estimated above the budget (:mod:`bondsim.budget`) is refused unless ``force``.

    >>> r = run("thesis", ["bond.mode=lb"])                      # doctest: +SKIP
    >>> r.summary["ooo_fraction"], r.requests.head()              # doctest: +SKIP
    >>> run("tcp_rr", pcap="out/pcap")                            # doctest: +SKIP
    """
    _check_run_options(progress, pcap)  # before the scenario is read: nothing starts on a bad argument
    doc = scenario_mod.load(scenario, overrides)
    return run_checked(doc, progress=progress, pcap=pcap, force=force)


def _check_run_options(progress: Any, pcap: Any) -> None:
    """Refuses a ``progress`` that cannot be called and a ``pcap`` of another type, naming the argument,
    before anything runs (the core would call ``progress`` mid-run and fail there)."""
    if progress is not None and not callable(progress):
        raise scenario_mod.type_error(
            "progress", "a function called as progress(done, total, sim_s), or None", progress
        )
    if pcap is not None and not isinstance(pcap, str | Path | Mapping):
        raise scenario_mod.type_error("pcap", "a directory (str or Path), a dict of capture options, or None", pcap)


@functools.cache
def summary_figures() -> dict[str, bool]:
    """Every scalar figure a run's summary may have (the core's schema of the summary, :func:`schemas`), and
    whether it is a number (a figure only some runs report, such as TCP's, is one when its type is)."""
    import pyarrow as pa

    return {f.name: pa.types.is_integer(f.type) or pa.types.is_floating(f.type) for f in schemas()["summary"]}


def run_checked(
    doc: dict, *, progress: ProgressFn | None = None, pcap: PcapSpec | None = None, force: bool = False
) -> RunResult:
    """Runs an already loaded and checked scenario dict (``pcap``, ``force``: as in :func:`run`)."""
    _check_run_options(progress, pcap)
    if not isinstance(doc, Mapping):
        raise scenario_mod.type_error("doc", "a checked scenario dict (bondsim.load gives one)", doc)
    budget.check([doc], force=force)
    if pcap is None:
        options = None
    elif isinstance(pcap, Mapping):
        options = json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in pcap.items()})
    else:
        options = json.dumps({"dir": str(pcap)})
    summary, tables = _core.run(json.dumps(doc), progress, options, budget.resident_limit(force))
    return RunResult.from_output(doc, decode_output(summary, tables))
