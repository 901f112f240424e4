"""``bondsim report``: one self-contained, offline HTML report (and PNGs) of a run, a sweep or stored runs.

* :mod:`bondsim.report.charts`: the charts as data, built from results (one place for what is drawn);
* :mod:`bondsim.report.html`: uPlot, its JavaScript inline (``draw.js`` draws the charts);
  :mod:`bondsim.report.png`: matplotlib.

A sweep (or a set of stored runs) gets its figures per scheduler against the swept axis, mean and 95%
interval over the replications, then the detail of a few of its runs (those that recorded time series
first, one per scheduler); a run directory gets its detail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim import columns
from bondsim._core import BondsimError, __version__
from bondsim.api import RunResult
from bondsim.report.charts import Section, league_section, run_sections, sweep_charts, sweep_table

if TYPE_CHECKING:  # a league's rows only: a report of runs is read and drawn without pandas
    import pandas as pd

#: Runs of a sweep shown in detail unless told (``--detail``).
DEFAULT_DETAIL = 3

#: What a report of TCP runs says of the figures it leads with.
TCP_NOTE = (
    "TCP hands its application every byte in order, so the delivery point's out-of-order share is 0 for "
    "every TCP run: the charts show what reordering on the wire cost instead (goodput, retransmissions and "
    "the spurious share of them, the out-of-order share on the clients' wire, completion times)."
)


@dataclass
class Source:
    """What a report shows: its title, the runs of a sweep (one row each, with the swept values and
    summary figures: :meth:`bondsim.store.Store.run_rows`) and the runs drawn in detail."""

    title: str
    runs: list[dict[str, Any]] | None = None
    axes: list[str] = field(default_factory=list)
    details: list[tuple[str, RunResult]] = field(default_factory=list)
    #: A stored league's rows and name (``--league``).
    league: tuple[str, pd.DataFrame] | None = None


def _is_run_dir(path: Path) -> bool:
    return path.is_dir() and (path / "summary.json").exists()


def _pick_details(runs: Sequence[dict[str, Any]], traced: set[int], count: int) -> list[int]:
    """Up to ``count`` run ids, those with time series first, then one per scheduler and engine, in grid order."""
    ids = [int(r["run_id"]) for r in runs]
    schedulers = [f"{r['scheduler']} {r['engine']}" for r in runs]
    order = sorted(range(len(ids)), key=lambda i: ids[i] not in traced)
    picked: list[int] = []
    seen: set[str] = set()
    for i in order:
        if schedulers[i] not in seen:
            seen.add(schedulers[i])
            picked.append(ids[i])
    return picked[:count]


def load_league(db: str | Path, ref: str | None) -> Source:
    """A league stored in ``db`` (``bondsim validate --league NAME --db``) by its id, or the latest."""
    from bondsim.store import Store

    with Store(db, read_only=True) as store:
        league_id, name, rows = store.league(ref)
    return Source(f"bondsim league {name} (stored as league {league_id})", league=(name, rows))


def load(refs: Sequence[str | Path], db: str | Path, detail: int = DEFAULT_DETAIL, sweep: str | None = None) -> Source:
    """A run directory (``bondsim run --out``), a sweep (its file or its name in ``db``), or run ids; or
    ``sweep``, a sweep by its id (or name) in ``db``."""
    from bondsim.store import Store

    refs = [str(r) for r in refs]
    if sweep is not None and refs:
        raise BondsimError(f"--sweep: give a sweep by --sweep or what to report ({' '.join(refs)}), not both")
    if not refs and sweep is None:
        raise BondsimError("report: give a run directory, a sweep, or run ids")
    if any(Path(r).is_dir() for r in refs):
        bad = next((r for r in refs if not _is_run_dir(Path(r))), None)
        if bad is not None:
            says = "no summary.json; bondsim run --out writes one" if Path(bad).is_dir() else "not a directory"
            raise BondsimError(f"{bad}: not a run directory ({says}); give run directories, or a sweep, or run ids")
        # One run directory or several: each run's sections, tagged by its directory (numbered if repeated)
        names = [Path(r).name for r in refs]
        tags = [n if names.count(n) == 1 else f"{n} ({i + 1})" for i, n in enumerate(names)]
        details = [(tag, RunResult.read(r)) for tag, r in zip(tags, refs, strict=True)]
        return Source(f"bondsim run {', '.join(names)}", details=details)
    if not Path(db).exists() and not all(r.isdigit() for r in refs) and not (refs and Path(refs[0]).exists()):
        raise BondsimError(
            f"{refs[0]}: no run directory or sweep file of that name, and no results database {db} to find a sweep in"
        )
    with Store(db, read_only=True) as store:
        if refs and all(r.isdigit() for r in refs):
            ids = {store.resolve(r) for r in refs}
            runs = [r for r in store.run_rows(figures=columns.FIGURES) if r["run_id"] in ids]
            title, axes = f"bondsim runs {', '.join(refs)}", []
        elif len(refs) <= 1:
            sweep_id, name = _sweep(store, refs[0] if refs else None, sweep)
            runs = store.run_rows(sweep=sweep_id, figures=columns.FIGURES)
            if not runs:
                raise BondsimError(f"{refs[0] if refs else sweep}: sweep `{name}` has no stored runs in {db}")
            axes = list(runs[0])[1 : list(runs[0]).index("run_id")]
            title = f"bondsim sweep {name}"
        else:
            raise BondsimError(f"report: give one sweep, one run directory, or run ids (got {' '.join(refs)})")
        ids = _pick_details(runs, store.runs_with_traces(), detail)
        loaded = store.load(ids, plain=True)
    details = [(f"run {i} ({loaded[i].summary.get('scheduler')})", loaded[i]) for i in ids]
    return Source(title, runs, axes, details)


def _sweep(store, ref: str | None, sweep: str | None) -> tuple[int, str]:
    """The stored sweep (id, name) that ``ref`` (a sweep file, or a sweep's name) or ``sweep`` (``--sweep``: its
    id or name) names. A sweep file names the sweep its grid made, not another of the same name."""
    if ref is None:
        sweep_id = store.sweep_id(sweep, "--sweep")
    elif ref.endswith(".toml") or Path(ref).exists():
        from bondsim.grid import load_sweep

        plan = load_sweep(ref)
        found = store.sweep_of(plan.name, plan.points.rows)
        if found is None:
            others = store.matching_sweeps(plan.name)
            differ = (
                f"; the sweeps named `{plan.name}` there have other grids (another file, or run with --set): "
                f"{store.describe_sweeps(others)}; pick one by its id, e.g. --sweep {others[-1]}"
                if others
                else ""
            )
            stores = f"bondsim sweep {ref} stores it"
            raise BondsimError(f"{ref}: its sweep is not stored in {store.path} ({stores}){differ}")
        sweep_id = found
    else:
        if not store.matching_sweeps(ref):
            have = store.describe_sweeps() or "none"
            raise BondsimError(
                f"{ref}: not an existing run directory or file, and no sweep of that name in {store.path} "
                f"(have: {have})"
            )
        sweep_id = store.sweep_id(ref, ref)
    (name,) = store.con.execute("SELECT name FROM sweeps WHERE sweep_id = ?", [sweep_id]).fetchone()
    return sweep_id, name


def sections(source: Source) -> list[Section]:
    """Every section the source's data allows: the sweep's figures, then each detailed run's."""
    out = []
    if source.league is not None:
        out.append(league_section(source.league[1], source.league[0]))
    if source.runs:
        n = len(source.runs)
        notes = [
            f"{n} runs; the band (or error bar) is Student's t 95% interval of the mean over the seeds. "
            "The table: the mean per grid point, as bondsim sweep prints it."
        ]
        if any(columns.summary_is_tcp(r) for r in source.runs):
            notes.append(TCP_NOTE)
        charts = sweep_charts(source.runs, source.axes, source.title)
        out.append(Section("Per scheduler", charts, notes, sweep_table(source.runs, source.axes)))
    for tag, result in source.details:
        out += run_sections(result, tag)
    return out


def write(source: Source, out: str | Path, png: str | Path | None = None) -> tuple[Path, list[Path]]:
    """Writes the HTML report to ``out`` and, with ``png``, every chart as a PNG there; all of them or
    none (:mod:`bondsim.atomic`)."""
    from bondsim import atomic
    from bondsim.report import html

    parts = sections(source)
    intro = [
        f"Written by bondsim {__version__}; self-contained (works offline). Charts: drag to zoom, double-click to "
        "reset, click a legend entry to hide its series."
    ]
    pngs: list[Path] = []
    with atomic.staged() as files:
        path = files.write_text(out, html.page(source.title, parts, intro=intro))
        if png is not None:
            from bondsim.report import png as png_mod

            pngs = png_mod.render(parts, png, files)
    return path, pngs
