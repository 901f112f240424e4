"""A reproduction's verdicts: each of the paper's results beside bondsim's, one row each.

A row states the paper's value as the paper prints it (its unit too) and where it is (table or figure,
page), bondsim's value, a verdict, and for any verdict but ``matches`` the run that explains the
difference, or the runs tried when none does. ``summary.md`` opens with these rows (:func:`section`) and
``verdicts.csv`` holds the same rows (:func:`write`), for the tests and for tools reading many
reproductions. What a result is judged against is stated in its row: a relative tolerance
(:func:`within`), or the paper's own words when it prints no number.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TypeVar

import pandas as pd

from bondsim import atomic

MATCHES = "matches"
EXPLAINED = "explained by experiment"
NOT_REPRODUCED = "not reproduced"
#: Every verdict a row may give.
KINDS = (MATCHES, EXPLAINED, NOT_REPRODUCED)
#: The file beside ``summary.md``.
FILE = "verdicts.csv"

Run = TypeVar("Run")


@dataclass(frozen=True)
class Verdict:
    """One of the paper's results and bondsim's."""

    #: the result and where the paper gives it: "Table 2 (p. 5): one link, transfer time"
    result: str
    #: the paper's value as printed, its unit as the paper's
    paper: str
    #: bondsim's value, in the paper's unit, with its spread where runs are random
    bondsim: str
    #: one of :data:`KINDS`
    verdict: str
    #: for a difference, the run that explains it ("E: ...") or the runs tried; for a match, what it was judged by
    because: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in KINDS:
            raise ValueError(f"verdict: {self.verdict!r} for {self.result!r}; allowed: {', '.join(KINDS)}")
        for name in ("result", "paper", "bondsim"):
            if not getattr(self, name).strip():
                raise ValueError(f"{name}: empty for {self.result!r}; a verdict states the paper's and bondsim's value")
        if self.verdict != MATCHES and not self.because.strip():
            raise ValueError(
                f"because: empty for {self.result!r}; a {self.verdict!r} verdict names the run that explains the "
                "difference or the runs tried"
            )


def within(paper: float, ours: float, tolerance: float) -> str:
    """:data:`MATCHES` when ``ours`` lies within ``tolerance`` (relative, 0.05 = ±5%) of ``paper``, else
    :data:`NOT_REPRODUCED`."""
    if paper == 0:
        raise ValueError("paper: 0; a relative tolerance needs a paper value other than 0")
    return MATCHES if abs(ours / paper - 1) <= tolerance else NOT_REPRODUCED


def within_abs(paper: float, ours: float, tolerance: float) -> str:
    """:data:`MATCHES` when ``ours`` lies within ``tolerance`` of ``paper`` in the figure's own unit (an
    instant read off a plot in whole seconds, a share in points), else :data:`NOT_REPRODUCED`."""
    return MATCHES if abs(ours - paper) <= tolerance else NOT_REPRODUCED


def difference(paper: float, ours: float, tolerance: float | None = None) -> str:
    """``ours`` against ``paper``, relative: "+0.2%"; with a ``tolerance``, with as many more decimals as it takes
    not to round onto it (-5.04% against ±5%, not -5.0%)."""
    d = ours / paper - 1
    places = 1
    if tolerance is not None:
        places = next((k for k in range(1, 6) if round(abs(d), k + 2) != tolerance), 5)
    return f"{d:+.{places}%}"


def first_holding(holds: Callable[[Run], bool], plain: Run, tried: Iterable[Run]) -> tuple[str, Run | None]:
    """THE rule for a result judged on the reproduction's own run and on experiments beside it: :data:`MATCHES`
    when ``plain`` holds it (``holds``), :data:`EXPLAINED` by the first of ``tried`` that does (returned with the
    verdict), else :data:`NOT_REPRODUCED`."""
    if holds(plain):
        return MATCHES, plain
    explains = next((run for run in tried if holds(run)), None)
    return (EXPLAINED, explains) if explains is not None else (NOT_REPRODUCED, None)


def compared(paper: float, ours: float, tolerance: float) -> tuple[str, str]:
    """:func:`within`'s verdict and what it was judged by: "+0.2% (tolerance ±2%)"."""
    return within(paper, ours, tolerance), f"{difference(paper, ours, tolerance)} (tolerance ±{tolerance * 100:g}%)"


def judge(
    result: str, paper: str, bondsim: str, figures: tuple[float, float], tolerance: float, otherwise: str
) -> Verdict:
    """The row of a figure judged by :func:`compared`: ``figures`` are (the paper's, bondsim's); ``otherwise``
    names what explains a difference, or the runs tried, and is said only when the figure does not match."""
    kind, judged_by = compared(*figures, tolerance)
    return Verdict(result, paper, bondsim, kind, judged_by if kind == MATCHES else f"{judged_by}; {otherwise}")


def table(rows: Sequence[Verdict]) -> str:
    """The rows as a markdown table."""
    lines = [
        "| result (where in the paper) | paper | bondsim | verdict | explained by / judged by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        cells = (r.result, r.paper, r.bondsim, f"**{r.verdict}**", r.because or "–")
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def section(rows: Sequence[Verdict]) -> str:
    """summary.md's opening section: the verdicts, counted, and their table."""
    counts = {kind: sum(r.verdict == kind for r in rows) for kind in KINDS}
    tally = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    return f"\n## Verdicts ({tally}; `{FILE}`)\n\n{table(rows)}\n"


def write(out: str | Path, rows: Sequence[Verdict]) -> str:
    """Writes ``verdicts.csv`` into ``out`` and returns :func:`section`'s text for summary.md."""
    if not rows:
        raise ValueError("rows: none; a reproduction of a paper has at least one verdict")
    frame = pd.DataFrame([asdict(r) for r in rows], columns=[f.name for f in fields(Verdict)])
    atomic.write_csv(frame, Path(out) / FILE)
    return section(rows)


def read(out: str | Path) -> list[Verdict]:
    """The rows a reproduction wrote into ``out``."""
    frame = pd.read_csv(Path(out) / FILE, dtype=str, keep_default_na=False)
    return [Verdict(**row) for row in frame.to_dict("records")]
