"""Sweep files: a base scenario, axes and replications, expanded into a checked grid of scenarios.

A sweep file (``*.sweep.toml``; bondsim ships ``thesis_load``: ``bondsim sweep thesis_load``)::

    name = "thesis_load"            # optional; default: the file's name without .sweep.toml
    base = "thesis"                 # scenario file (relative to this one), shipped name, or an inline table
    replications = 3                # seeds base.seed, base.seed + 1, ...; or seeds = [1, 7, 42]
    max_runs = 50000                # optional: the most runs the grid may have (default 10,000)

    [set]                           # fixed changes to the base, by dotted path
    "links.1.period_ms" = 82

    [[axes]]
    path = "workload.requests"      # any scenario field by its dotted path (list items by index)
    range = { start = 10, stop = 100, step = 10 }       # stop included

    [[axes]]
    path = "bond.mode"
    values = ["rr", "lb"]

    [[axes]]
    path = "workload.file_size.bytes"
    name = "file_bytes"             # its column in results (default: the path)
    logrange = { start = 1024, stop = 1048576, num = 11 }  # integers if start and stop are

The grid is every combination of axis values, first axis slowest, with the
seed fastest. Every point is checked against the schema before anything runs;
an error names the sweep file's key (``axes.1.values.2: ...``) and the field.
Points are made one at a time (:class:`Grid`): a grid of millions is checked
with progress shown and keeps 8 bytes a point, its scenarios made again when
they run.
"""

from __future__ import annotations

import copy
import math
import numbers
import os
import tomllib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bondsim import budget
from bondsim._core import ScenarioError
from bondsim.progress import LOG_EVERY_S, Bar
from bondsim.scenario import (
    MISSING,
    apply_overrides,
    check_resolved,
    find,
    override_list,
    plain,
    read_text,
    scenario_error,
    scenario_hash,
    set_path,
    too_deep,
    type_error,
    value_at,
    warn,
    warnings_to,
)

SWEEP_KEYS = ("name", "base", "set", "axes", "replications", "seeds", "max_runs")
AXIS_KEYS = ("path", "name", "values", "range", "logrange")
MAX_AXIS_VALUES = 1_000_000
#: Most runs a sweep may have unless its file says ``max_runs = N``: every point is checked before
#: anything runs, so a grid is expanded only once its size is known to be within this.
MAX_RUNS = 10_000


@dataclass(frozen=True)
class Axis:
    """One swept field: its dotted path, its column name, its values."""

    path: str
    name: str
    values: tuple


@dataclass(frozen=True)
class Point:
    """One scenario of a grid: where it stands (``labels``: axis name -> value, and the seed)."""

    index: int
    labels: dict
    scenario: dict
    key: str  # the checked scenario's hash


class Points(Sequence[Point]):
    """Points to run, in order: what :meth:`bondsim.sweeps.Runner.execute` takes. Each is made when asked
    for; :meth:`key` and :attr:`rows` may know a point's hash without making it (a :class:`Grid` does)."""

    def key(self, index: int) -> str:
        """The scenario hash of point ``index``."""
        return self[index].key

    def scenario(self, index: int) -> dict:
        """The checked scenario of point ``index``."""
        return self[index].scenario

    def distinct(self) -> list[int]:
        """The first point of each distinct scenario, in order."""
        first: dict[str, int] = {}
        for index in range(len(self)):
            first.setdefault(self.key(index), index)
        return list(first.values())

    @property
    def rows(self) -> Iterable[tuple[int, str, int, dict]]:
        """The points as the results database records them (``Store.add_sweep``): ``(point,
        scenario_hash, seed, labels)``, as often as it is iterated."""
        return _Rows(self)

    def _row(self, index: int) -> tuple[int, str, int, dict]:
        p = self[index]
        return (p.index, p.key, p.scenario["seed"], p.labels)


class _Rows:
    def __init__(self, points: Points):
        self.points = points

    def __iter__(self) -> Iterator[tuple[int, str, int, dict]]:
        return (self.points._row(i) for i in range(len(self.points)))


class Listed(Points):
    """Points made already (``bondsim.sweeps.run_many``'s scenarios)."""

    def __init__(self, points: Iterable[Point]):
        self._points = list(points)

    def __len__(self) -> int:
        return len(self._points)

    def __getitem__(self, index):
        return self._points[index]


#: A grid of at most this many points keeps its checked scenarios (about 10 kB each) once made; a larger
#: one keeps only their hashes (8 bytes a point) and makes a scenario again when it is asked for.
KEEP_SCENARIOS = 1_000


class Grid(Points):
    """Every combination of the axes' values and the seeds (first axis slowest, seed fastest), made
    point by point: memory does not grow with the grid beyond each point's hash (:data:`KEEP_SCENARIOS`).

    :meth:`check` makes and checks every point once, in order, with progress shown: the hashes come
    from it, and every point of a grid :func:`load_sweep` returns has passed it."""

    def __init__(self, base: dict, base_dir: Path, axes: Sequence[Axis], seeds: Sequence[int]):
        self.base, self.base_dir, self.axes, self.seeds = base, base_dir, list(axes), seeds
        self._sizes = [len(a.values) for a in self.axes] + [len(seeds)]
        self._keys = array("Q")
        self._kept: list[dict] | None = [] if len(self) <= KEEP_SCENARIOS else None

    def __len__(self) -> int:
        return math.prod(self._sizes)

    def labels(self, index: int) -> dict:
        """Where point ``index`` stands: axis name -> value, and the seed."""
        *values, seed = self._coordinates(index)
        return {a.name: v for a, v in zip(self.axes, values, strict=True)} | {"seed": seed}

    def _coordinates(self, index: int) -> list:
        if not 0 <= index < len(self):
            raise IndexError(f"point {index} of a grid of {len(self)}")
        picked = []
        for size, values in zip(
            reversed(self._sizes), reversed([*(a.values for a in self.axes), self.seeds]), strict=True
        ):
            index, at = divmod(index, size)
            picked.append(values[at])
        return picked[::-1]

    def _make(self, index: int) -> dict:
        *values, seed = self._coordinates(index)
        changes = [*((a.path, v) for a, v in zip(self.axes, values, strict=True)), ("seed", seed)]
        try:
            return _with(self.base, changes, self.base_dir)
        except ScenarioError as exc:
            where_text = ", ".join(f"{k}={v}" for k, v in self.labels(index).items())
            err = scenario_error("", f"sweep point {index} ({where_text}): {exc}")
            err.path = exc.path
            raise err from None

    def check(self, label: str, progress: bool = False) -> None:
        """Makes and checks every point, keeping its hash; a point that fails is a ScenarioError naming it.
        An axis whose field some points' runs ignore (another mode's option) is said to repeat their runs."""
        bar = Bar(label, len(self), progress, unit="points checked", after_s=LOG_EVERY_S)
        ignored = [0] * len(self.axes)  # per axis: the points whose run ignores its field
        try:
            for index in range(len(self._keys), len(self)):
                said: list[str] = []
                with warnings_to(said.append):
                    doc = self._make(index)
                for text in said:
                    warn(text)
                    field = text.split(":", 1)[0]
                    for i, axis in enumerate(self.axes):
                        ignored[i] += field == axis.path or axis.path.startswith(field + ".")
                self._keys.append(int(scenario_hash(doc), 16))
                if self._kept is not None:
                    self._kept.append(doc)
                if index % 256 == 255:
                    bar.update(index + 1)
            bar.update(len(self))
        finally:
            bar.close()
        for i, (axis, count) in enumerate(zip(self.axes, ignored, strict=True)):
            if count and len(axis.values) > 1:
                warn(
                    f"axes.{i}: {count:,} of the grid's {len(self):,} runs set {axis.path} where their run ignores "
                    f"it, so its {len(axis.values)} values repeat the same run there"
                )

    def key(self, index: int) -> str:
        return f"{self._keys[index]:016x}"

    def scenario(self, index: int) -> dict:
        return self._kept[index] if self._kept is not None else self._make(index)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self))[index]  # negative indices, and IndexError past the end
        return Point(index=index, labels=self.labels(index), scenario=self.scenario(index), key=self.key(index))

    def distinct(self) -> list[int]:
        keys = np.frombuffer(self._keys, dtype=np.uint64)
        return np.sort(np.unique(keys, return_index=True)[1]).tolist()

    def _row(self, index: int) -> tuple[int, str, int, dict]:
        labels = self.labels(index)
        return (index, self.key(index), labels["seed"], labels)


@dataclass
class Sweep:
    """A sweep file, read: its grid's points made and checked one by one (:class:`Grid`)."""

    name: str
    spec: dict
    axes: list[Axis]
    seeds: Sequence[int]
    points: Grid


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number(value: Any, where: str) -> float | int:
    if not _is_number(value) or not math.isfinite(value):
        raise scenario_error(where, f"must be a number, got {value!r}")
    return value


def _tidy(value: float) -> float:
    """``0.30000000000000004`` -> ``0.3``: 12 significant digits."""
    return float(f"{value:.12g}")


def _table(raw: Any, where: str, keys: tuple[str, ...], shape: str) -> Mapping:
    if not isinstance(raw, Mapping):
        raise scenario_error(where, f"must be a table {shape}")
    for key in raw:
        if key not in keys:
            raise scenario_error(f"{where}.{key}", f"unknown key, expected one of {', '.join(keys)}")
    for key in keys:
        if key not in raw:
            raise scenario_error(where, f"must be a table {shape}; `{key}` is missing")
    return raw


def _linear(raw: Any, where: str) -> list:
    spec = _table(raw, where, ("start", "stop", "step"), "{start, stop, step} (stop included)")
    start, stop, step = (_number(spec[k], f"{where}.{k}") for k in ("start", "stop", "step"))
    if step == 0 or (stop - start) / step < 0:
        raise scenario_error(f"{where}.step", f"must be non-zero and lead from start ({start}) to stop ({stop})")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_AXIS_VALUES:
        raise scenario_error(where, f"gives {count:,} values; at most {MAX_AXIS_VALUES:,}")
    integers = all(isinstance(v, int) for v in (start, step))
    return [start + i * step if integers else _tidy(start + i * step) for i in range(count)]


def _log(raw: Any, where: str) -> list:
    spec = _table(raw, where, ("start", "stop", "num"), "{start, stop, num} (both ends included)")
    start, stop = (_number(spec[k], f"{where}.{k}") for k in ("start", "stop"))
    num = spec["num"]
    if not isinstance(num, int) or isinstance(num, bool) or not 1 <= num <= MAX_AXIS_VALUES:
        raise scenario_error(f"{where}.num", f"must be a whole number of values, 1 to {MAX_AXIS_VALUES:,}; got {num!r}")
    if start <= 0 or stop <= 0:
        raise scenario_error(where, f"a log range needs start and stop above 0, got {start} and {stop}")
    raw_values = [start * (stop / start) ** (i / (num - 1)) if num > 1 else start for i in range(num)]
    values = [round(v) for v in raw_values] if isinstance(start, int) and isinstance(stop, int) else raw_values
    values = [v if isinstance(v, int) else _tidy(v) for v in values]
    repeated = len(values) - len(set(values))
    if repeated:
        raise scenario_error(
            f"{where}.num",
            f"{num} values from {start} to {stop} repeat {repeated} of them once rounded "
            f"({', '.join(map(str, values[:8]))}{', ...' if len(values) > 8 else ''}); ask for fewer",
        )
    return values


def _listed(raw: Any, where: str) -> list:
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Iterable):
        raise scenario_error(where, f"must be a list of values, e.g. [10, 20, 40]; got {raw!r}")
    return list(raw)


def _has_field(doc: Any, path: str) -> bool:
    return value_at(doc, path) is not MISSING


def _with(doc: dict, changes: Iterable[tuple[str, Any]], base_dir: Path) -> dict:
    """The scenario ``doc`` as written (not resolved: a field another one derives, such as the MSS from the
    links' MTU, or one of a part's kind, such as ``sender.mptcp_scheduler``, stays unset unless written) with
    ``changes`` (path, value) applied, checked and resolved, as ``bondsim run --set`` does it."""
    doc = copy.deepcopy(doc)
    for path, value in changes:
        set_path(doc, path, value)
    return check_resolved(doc, base_dir)


@dataclass(frozen=True)
class _RawAxis:
    """An axis as written: its values generated, none of them checked against the base yet."""

    path: str
    name: str
    kind: str
    values: list


def _raw_axis(i: int, raw: Any) -> _RawAxis:
    where = f"axes.{i}"
    if not isinstance(raw, Mapping):
        raise scenario_error(where, "an axis is a table: path and one of values, range, logrange")
    for key in raw:
        if key not in AXIS_KEYS:
            raise scenario_error(f"{where}.{key}", f"unknown key in an axis, expected one of {', '.join(AXIS_KEYS)}")
    path = raw.get("path")
    if not isinstance(path, str) or not path:
        raise scenario_error(
            f"{where}.path", "an axis needs a path: a scenario field by its dotted path, e.g. workload.requests"
        )
    if path == "seed":
        raise scenario_error(f"{where}.path", "the seed is swept by replications = N or seeds = [...], not by an axis")
    kinds = [k for k in ("values", "range", "logrange") if k in raw]
    if len(kinds) != 1:
        raise scenario_error(where, f"give exactly one of values, range, logrange (got {', '.join(kinds) or 'none'})")
    kind = kinds[0]
    values = {"values": _listed, "range": _linear, "logrange": _log}[kind](raw[kind], f"{where}.{kind}")
    if not values:
        raise scenario_error(f"{where}.{kind}", "an axis needs at least one value")
    name = raw.get("name", path)
    if not isinstance(name, str) or not name:
        raise scenario_error(f"{where}.name", f"must be a non-empty string, got {name!r}")
    from bondsim.api import summary_figures
    from bondsim.columns import DERIVED
    from bondsim.store import SWEEP_RUN_COLUMNS

    # A summary figure's name would stand for the figure in every result; an axis may take it only for the
    # field the figure reports (`requests` for workload.requests: the two are one value).
    # The columns every sweep result has (`point`, `seed`, `run_id`, ... as the store writes them), and those
    # computed from the figures (`goodput_mbps`, ...).
    taken = name in SWEEP_RUN_COLUMNS or name in DERIVED
    if taken or (name in summary_figures() and path.rsplit(".", 1)[-1] != name):
        raise scenario_error(f"{where}.name", f"`{name}` is a column of every sweep result; choose another name")
    return _RawAxis(path=path, name=name, kind=kind, values=values)


def _axis(i: int, raw: _RawAxis, base: dict, resolved: dict, base_dir: Path) -> Axis:
    """``raw`` with every value checked against the base scenario (``base`` as written, ``resolved`` checked)."""
    where, path, kind, values = f"axes.{i}", raw.path, raw.kind, raw.values
    if not _has_field(resolved, path):
        # A field left out of the checked base (an optional one) is found by setting it: an unknown
        # field is the path's fault, any other error the first value's (checked below).
        try:
            _with(base, [(path, values[0])], base_dir)
        except ScenarioError as exc:
            if "unknown field" in str(exc) or not str(getattr(exc, "path", "")).startswith(path):
                raise scenario_error(f"{where}.path", f"{path} is not a field of the base scenario ({exc})") from None
    seen: dict[str, int] = {}  # scenario hash -> the value's index
    for j, value in enumerate(values):
        at = f"{where}.values.{j}" if kind == "values" else f"{where}.{kind}"
        try:
            key = scenario_hash(_with(base, [(path, value)], base_dir))
        except ScenarioError as exc:
            raise scenario_error(at, f"{path} = {value!r}: {exc}") from None
        if key in seen:
            k, other = seen[key], values[seen[key]]
            if kind != "values":
                message = f"value {j} ({value!r}) repeats value {k} ({other!r}) once rounded; give each value once"
            elif value == other and type(value) is type(other):
                message = f"{path} = {value!r} repeats {where}.values.{k}; give each value once"
            else:
                message = (
                    f"{path} = {value!r} gives the same scenario as {where}.values.{k} ({other!r}); "
                    "give each value once"
                )
            raise scenario_error(at, message)
        seen[key] = j
    return Axis(path=path, name=raw.name, values=tuple(values))


def _max_runs(spec: Mapping) -> int:
    limit = spec.get("max_runs", MAX_RUNS)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise scenario_error("max_runs", f"must be a whole number of runs, 1 or more; got {limit!r}")
    return limit


def _seed_count(spec: Mapping) -> int:
    """How many seeds ``spec`` asks for, without making them."""
    if isinstance(spec.get("replications"), int) and not isinstance(spec.get("replications"), bool):
        return max(spec["replications"], 1)
    seeds = spec.get("seeds")
    if isinstance(seeds, list):
        return max(len(seeds), 1)
    return 1


def _check_size(axes: list[_RawAxis], spec: Mapping, limit: int) -> None:
    """Refuses, before any point is made or checked, a grid of more than ``limit`` runs."""
    seeds = _seed_count(spec)
    runs = math.prod(len(a.values) for a in axes) * seeds
    if runs <= limit:
        return
    sizes = " × ".join([*(f"{len(a.values):,} ({a.name})" for a in axes), f"{seeds:,} seed(s)"])
    where = "replications" if "replications" in spec and seeds > limit else "seeds" if seeds > limit else "axes"
    raise scenario_error(
        where,
        f"the grid has {runs:,} runs ({sizes}); a sweep may have at most {limit:,} "
        "(set max_runs = N in the sweep file to allow more)",
    )


def _seeds(spec: Mapping, base_seed: int) -> Sequence[int]:
    if "replications" in spec and "seeds" in spec:
        raise scenario_error("seeds", "give replications = N or seeds = [...], not both")
    if "replications" in spec:
        count = spec["replications"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise scenario_error("replications", f"must be a whole number of runs, 1 or more; got {count!r}")
        if base_seed + count > 2**64:
            raise scenario_error(
                "replications",
                f"{count} replications count seeds up from the base seed {base_seed} past 2^64-1; "
                "lower the seed or give seeds = [...]",
            )
        return range(base_seed, base_seed + count)
    if "seeds" in spec:
        seeds = _listed(spec["seeds"], "seeds")
        if not seeds:
            raise scenario_error("seeds", "needs at least one seed")
        for j, seed in enumerate(seeds):
            if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
                raise scenario_error(f"seeds.{j}", f"a seed is a whole number from 0 to 2^64-1, got {seed!r}")
        if len(set(seeds)) != len(seeds):
            raise scenario_error("seeds", "lists a seed twice")
        return seeds
    return [base_seed]


def _read_toml(path: Path, where: str, what: str) -> dict:
    text = read_text(path, where, what)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise scenario_error(where, f"{path} is not valid TOML: {exc}") from None


def _base(spec: Mapping, where: Path, overrides: Iterable[str]) -> tuple[dict, dict, Path]:
    """The base scenario with ``set`` and ``overrides``, as written and checked, and the folder its file
    references start from."""
    raw = spec.get("base")
    if isinstance(raw, Mapping):
        doc, base_dir = dict(raw), where
    elif isinstance(raw, str) and raw:
        beside = where / raw  # a file beside the sweep file; else the working folder's, or a shipped name
        path = beside if beside.exists() and not beside.is_dir() else find(raw, "base")
        doc, base_dir = _read_toml(path, "base", "scenario"), path.parent
    else:
        raise scenario_error("base", "a sweep needs a base scenario: a file, a shipped name like `thesis`, or a table")
    try:
        check_resolved(doc, base_dir)
    except ScenarioError as exc:
        if isinstance(raw, str) and ("axes" in doc or "base" in doc):
            raise scenario_error(
                "base", f"{raw} is a sweep file, not a scenario; a sweep's base is a scenario"
            ) from None
        raise scenario_error("base", str(exc)) from None
    changes = spec.get("set", {})
    if not isinstance(changes, Mapping):
        raise scenario_error("set", 'must be a table of dotted paths and values, e.g. "links.1.period_ms" = 82')
    written = copy.deepcopy(doc)
    for path, value in changes.items():
        set_path(written, path, value)
    try:
        check_resolved(written, base_dir)
    except ScenarioError as exc:
        raise scenario_error("set", str(exc)) from None
    written = apply_overrides(written, overrides)
    return written, check_resolved(written, base_dir), base_dir


def _is_scenario(doc: Mapping, where: Path) -> bool:
    """Whether ``doc`` is a valid scenario (a file given where a sweep, or a sweep where a scenario,
    belongs), by the schema itself."""
    try:
        check_resolved(doc, where)
    except ScenarioError:
        return False
    return True


def _normalised(spec: Mapping) -> dict:
    """``spec`` with Python conveniences turned into the file's layout: ``axes`` as {path: values}."""
    spec = plain(spec)
    if isinstance(spec.get("axes"), Mapping):
        spec["axes"] = [
            {"path": path, "values": _listed(values, f"axes.{path}")} for path, values in spec["axes"].items()
        ]
    return spec


def load_sweep(
    source: str | Path | Mapping, overrides: Iterable[str] = (), *, progress: bool = False, force: bool = False
) -> Sweep:
    """Reads a sweep (TOML file, the name of a shipped one like ``thesis_load``, or a dict in the same layout)
    and checks every point of its grid, one by one (``progress``: with a bar, or lines in a log). A grid
    whose checking alone is estimated above the budget is refused unless ``force``
    (:func:`bondsim.budget.check_grid`).

    ``overrides`` (``path=value``) change the base scenario, like ``bondsim run --set``.
    In a dict, ``axes`` may also be ``{path: values}``.
    """
    try:
        return _load_sweep(source, overrides, progress, force)
    except RecursionError:
        raise too_deep() from None


def _load_sweep(source: str | Path | Mapping, overrides: Iterable[str], progress: bool, force: bool) -> Sweep:
    if isinstance(source, Mapping):
        spec, where, default_name = _normalised(source), Path.cwd(), "sweep"
    elif not isinstance(source, str | os.PathLike):
        raise type_error(
            "spec", "a sweep: a *.sweep.toml file (str or Path), a dict in its layout, or a loaded Sweep", source
        )
    else:
        path = find(os.fspath(source), "", kind="sweep")
        spec = _read_toml(path, "", "sweep file")
        where, default_name = path.parent, path.name.removesuffix(".toml").removesuffix(".sweep")
    for key in spec:
        if key not in SWEEP_KEYS:
            if _is_scenario(spec, where):
                what = source if not isinstance(source, Mapping) else "this"
                raise scenario_error(
                    "", f"{what} is a scenario, not a sweep: run it with bondsim run, or name it as a sweep's base"
                )
            raise scenario_error(key, f"unknown key in a sweep file, expected one of {', '.join(SWEEP_KEYS)}")
    name = spec.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise scenario_error("name", f"must be a non-empty string, got {name!r}")

    limit = _max_runs(spec)
    raw_axes = spec.get("axes", [])
    if not isinstance(raw_axes, list):
        raise scenario_error("axes", "must be a list of axes: [[axes]] tables with path and values, range or logrange")
    drafts: list[_RawAxis] = []
    for i, raw in enumerate(raw_axes):
        axis = _raw_axis(i, raw)
        for j, other in enumerate(drafts):
            if axis.path == other.path:
                raise scenario_error(f"axes.{i}.path", f"{axis.path} is already swept by axes.{j}")
            if axis.name == other.name:
                raise scenario_error(f"axes.{i}.name", f"`{axis.name}` already names axes.{j}")
        drafts.append(axis)
    _check_size(drafts, spec, limit)
    overrides = override_list(overrides)
    fixed = spec.get("set", {})
    for i, axis in enumerate(drafts):
        if isinstance(fixed, Mapping) and axis.path in fixed:
            raise scenario_error(f"set.{axis.path}", f"is swept by axes.{i}: every point would replace it")
    for item in overrides:
        path = item.partition("=")[0].strip()
        swept = next((i for i, a in enumerate(drafts) if a.path == path), None)
        if swept is not None:
            raise scenario_error(path, f"is swept by axes.{swept}: a --set of it would be replaced by every point")
    base, resolved, base_dir = _base(spec, where, overrides)
    axes = [_axis(i, raw, base, resolved, base_dir) for i, raw in enumerate(drafts)]
    seeds = _seeds(spec, resolved["seed"])

    points = Grid(base, base_dir, axes, seeds)
    budget.check_grid(len(points), force=force)
    points.check(f"sweep {name}", progress)
    # what the database records: the sweep as written, where it came from, the overrides
    spec |= {"file": None if isinstance(source, Mapping) else str(source), "overrides": list(overrides)}
    return Sweep(name=name, spec=spec, axes=axes, seeds=seeds, points=points)
