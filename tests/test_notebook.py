"""The tutorial notebook (examples/tutorial.ipynb) runs top to bottom with this build (nbclient, a
Python 3 kernel from ipykernel), so what it shows cannot rot: every cell without an error, the answer
table holding every mode, the sweep's five seeds per mode, the failure table's two rows, the plot
written."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is a dev dependency (make build installs it)")
nbclient = pytest.importorskip("nbclient", reason="nbclient is a dev dependency (make build installs it)")

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "tutorial.ipynb"


def _results(nb) -> list[str]:
    """Each code cell's result as text ('' for a cell without one)."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = [o["data"]["text/plain"] for o in cell.outputs if o.output_type == "execute_result"]
        out.append(texts[0] if texts else "")
    return out


def test_the_tutorial_notebook_runs_and_answers(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "the notebook is kept without outputs"
    where = {"metadata": {"path": str(tmp_path)}}
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources=where).execute()
    workload, per_mode, sweep, best, failures = _results(nb)
    assert "'requests': 8" in workload
    for mode in ("balance-rr", "balance-xor", "802.3ad", "active-backup", "earliest-finish"):
        assert mode in per_mode
    assert sweep.count(" 5 ") >= 4, sweep  # five seeds for each of the four modes
    assert best.strip("'") in {"balance-rr", "balance-xor", "earliest-finish", "active-backup"}
    assert "balance-rr" in failures and "active-backup" in failures and "link0" in failures
    assert (tmp_path / "tutorial-goodput.png").stat().st_size > 1000
