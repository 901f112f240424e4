"""Running many scenarios: a grid of scenario dicts in, one row per run out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from bondsim.api import RunResult, run_checked
from bondsim.scenario import check


def run_many(docs: Sequence[dict], *, progress: bool = True) -> list[RunResult]:
    """Runs every scenario dict in order; shows a progress bar unless ``progress`` is false."""
    from rich.progress import Progress

    checked = [check(d) for d in docs]  # every scenario is checked before any runs
    results = []
    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("running", total=len(checked))
        for doc in checked:
            results.append(run_checked(doc))
            bar.advance(task)
    return results


def summaries(results: Iterable[RunResult], labels: Iterable[dict]) -> pd.DataFrame:
    """One row per run: its labels (the swept values) beside its summary figures."""
    rows = []
    for result, label in zip(results, labels, strict=True):
        row = dict(label)
        row.update({k: v for k, v in result.summary.items() if not isinstance(v, list | dict)})
        rows.append(row)
    return pd.DataFrame(rows)
