"""Atomic outputs (issue 39, item 4): every file a command writes goes into place whole, or not at all.

The helper itself (``bondsim.atomic``) is tested with writers that fail; the commands on a full disk: a
64 kB tmpfs, mounted where root is allowed to (skipped, saying why, elsewhere). On it each command must
exit 2 with one line naming the file and the operating system's cause, leave no partial or temporary
file, and leave an earlier complete output in that place as it was."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

import bondsim
from bondsim import BondsimError, atomic
from bondsim.cli.emulate import write_rows
from bondsim.store import Store

#: What a full disk says (ENOSPC's strerror).
NO_SPACE = os.strerror(errno.ENOSPC)


def files_in(directory: Path) -> dict[str, bytes]:
    """Every file below ``directory`` (hidden ones too) and its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def one_line(proc) -> str:
    """The error of a command that must have failed with exit 2 and one line on stderr."""
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return proc.stderr.strip()


# -- the helper --------------------------------------------------------------------------------------------


def test_files_go_into_place_together_when_all_are_complete(tmp_path):
    (tmp_path / "a.txt").write_text("earlier a")
    (tmp_path / "stale.csv").write_text("an earlier output's file this one has not")
    with atomic.staged() as files:
        files.write_text(tmp_path / "a.txt", "new a")
        files.write_text(tmp_path / "b.txt", "new b")
        files.remove(tmp_path / "stale.csv")
        # Until the block ends, the earlier output is what a reader sees.
        assert (tmp_path / "a.txt").read_text() == "earlier a" and not (tmp_path / "b.txt").exists()
        assert (tmp_path / "stale.csv").exists()
    assert files_in(tmp_path) == {"a.txt": b"new a", "b.txt": b"new b"}


@pytest.mark.parametrize("failure", [RuntimeError("the writer's bug"), KeyboardInterrupt()])
def test_a_failure_mid_write_leaves_no_temporary_file_and_the_earlier_output_as_it_was(tmp_path, failure):
    (tmp_path / "a.txt").write_text("earlier a")

    def half(path: Path) -> None:
        path.write_text("half of it")
        raise failure

    with pytest.raises(type(failure)), atomic.staged() as files:
        files.write_text(tmp_path / "a.txt", "new a")
        files.write(tmp_path / "b.txt", half)
    assert files_in(tmp_path) == {"a.txt": b"earlier a"}
    with pytest.raises(type(failure)):
        atomic.write(tmp_path / "new" / "deeper" / "c.txt", half)
    assert files_in(tmp_path) == {"a.txt": b"earlier a"}
    assert not (tmp_path / "new").exists(), "the directories made for a failed output are gone"


def test_writers_within_an_output_join_it_and_go_into_place_with_it(tmp_path):
    """What a reproduction does: files written from several places (``atomic.write`` in plots, an inner
    ``staged()``, a ``@whole`` function) are one output, in place only when the outermost block ends; a
    file written twice counts its last writing."""

    @atomic.whole
    def tables(text: str) -> None:
        atomic.write_text(tmp_path / "a.csv", text)
        with atomic.staged() as inner:
            inner.write_text(tmp_path / "b.csv", text)
        # written, not yet in place: a reader sees what was there before
        assert all(not p.exists() or p.read_text() != text for p in (tmp_path / "a.csv", tmp_path / "b.csv"))

    with atomic.staged() as files:
        tables("a")
        files.write_text(tmp_path / "summary.md", "first")
        files.write_text(tmp_path / "summary.md", files.read_text(tmp_path / "summary.md") + ", then more")
        assert all(".part-" in name for name in files_in(tmp_path))
    assert files_in(tmp_path) == {"a.csv": b"a", "b.csv": b"a", "summary.md": b"first, then more"}
    tables("b")  # alone, a @whole function is an output of its own
    assert files_in(tmp_path) == {"a.csv": b"b", "b.csv": b"b", "summary.md": b"first, then more"}


def test_an_os_error_names_the_target_and_keeps_its_cause(tmp_path):
    def full(path: Path) -> None:
        raise OSError(errno.ENOSPC, NO_SPACE, str(path))  # as a full disk raises it: the temporary name

    with pytest.raises(OSError) as caught:
        atomic.write(tmp_path / "out.csv", full)
    assert (caught.value.errno, caught.value.strerror, caught.value.filename) == (
        errno.ENOSPC,
        NO_SPACE,
        str(tmp_path / "out.csv"),
    )
    assert files_in(tmp_path) == {}


def test_a_written_file_has_the_mode_open_gives_and_keeps_its_suffix_for_the_writer(tmp_path):
    seen = []
    atomic.write(tmp_path / "figure.png", lambda path: seen.append(path) or path.write_bytes(b"png"))
    assert seen[0].suffix == ".png" and seen[0].parent == tmp_path  # formats picked by suffix, same file system
    (tmp_path / "by_open.png").write_bytes(b"png")
    assert (tmp_path / "figure.png").stat().st_mode == (tmp_path / "by_open.png").stat().st_mode


# -- the commands on a full disk -------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(disk, size: str):
    """``disk`` as a tmpfs of ``size`` (``64k``, ``6m``): a disk that fills up. Unmounted afterwards (lazily,
    if something still holds it); the test is skipped where it cannot be mounted (not root)."""
    disk.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command: the full-disk tests mount a small tmpfs")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {proc.stderr.strip() or proc.returncode}")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


@pytest.fixture
def full_disk(tmp_path):
    """A 64 kB tmpfs: a disk that fills up at once."""
    with tmpfs(tmp_path / "disk", "64k") as disk:
        yield disk


#: A run whose files fill far more than 64 kB (requests.csv: one row per request).
BIG = ["thesis", "--quiet", "--set", "workload.requests=2000"]
#: A run whose files fit.
SMALL = ["thesis", "--quiet", "--set", "workload.requests=2"]


def test_run_out_on_a_full_disk_keeps_the_earlier_run(main, full_disk):
    run_dir = full_disk / "run"
    assert main("run", *SMALL, "--out", str(run_dir)).returncode == 0
    earlier = files_in(full_disk)
    error = one_line(main("run", *BIG, "--out", str(run_dir)))
    assert error == f"error: --out: cannot write {run_dir / 'requests.csv'}: {NO_SPACE}"
    assert files_in(full_disk) == earlier
    one_line(main("run", *BIG, "--out", str(full_disk / "new" / "run")))
    assert files_in(full_disk) == earlier and not (full_disk / "new").exists()


def test_report_on_a_full_disk_writes_neither_the_page_nor_the_pngs(main, full_disk, tmp_path):
    run_dir = tmp_path / "run"
    assert main("run", *SMALL, "--out", str(run_dir)).returncode == 0
    (full_disk / "report.html").write_text("an earlier report")
    earlier = files_in(full_disk)
    args = ("report", str(run_dir), "--quiet", "--out", str(full_disk / "report.html"))
    error = one_line(main(*args, "--png", str(full_disk / "png")))
    assert error.startswith("error: --out/--png: cannot write ") and error.endswith(NO_SPACE)
    assert files_in(full_disk) == earlier and not (full_disk / "png").exists()


def test_runs_export_on_a_full_disk_writes_no_table(main, full_disk, tmp_path):
    db = tmp_path / "runs.duckdb"
    with Store(db) as store:
        store.add_result(bondsim.run("thesis", ["workload.requests=2000"]), "simulator")
    out = full_disk / "export"
    out.mkdir()
    (out / "runs.csv").write_text("an earlier export")
    earlier = files_in(full_disk)
    error = one_line(main("runs", "export", str(out), "--db", str(db), "--format", "csv"))
    assert error.startswith(f"error: out: cannot write {out}/") and error.endswith(f".csv: {NO_SPACE}")
    assert files_in(full_disk) == earlier


def test_a_capture_on_a_full_disk_says_it_could_not_write(main, full_disk):
    assert main("run", *SMALL, "--pcap", str(full_disk)).returncode == 0
    earlier = files_in(full_disk)
    assert earlier and all(name.endswith(".pcapng") for name in earlier)
    error = one_line(main("run", *BIG, "--pcap", str(full_disk)))
    # pcap-file's own words for it were "Error reading bytes".
    assert error.startswith(f"error: pcap: {full_disk}/") and f".pcapng: cannot write it: {NO_SPACE}" in error
    assert files_in(full_disk) == earlier


def test_validate_and_league_rows_on_a_full_disk(full_disk):
    out = full_disk / "league.csv"
    write_rows(out, [{"case": "earlier", "agrees": True}])
    earlier = files_in(full_disk)
    with pytest.raises(BondsimError, match=f"^--out: cannot write {out}: {NO_SPACE}$"):
        write_rows(out, [{"case": "x" * 100, "agrees": True}] * 1000)
    assert files_in(full_disk) == earlier


# -- reproduce --out: one output of tables, figures and summary ------------------------------------------


def test_a_reproduction_that_fails_midway_leaves_no_table_figure_or_summary(main, tmp_path, monkeypatch):
    """``reproduce --out``'s CSV tables, figures and summary.md are one output: a failure after some are
    written (here the second figure, a full disk) leaves none of them, and an earlier reproduction as it was."""
    from bondsim import plots

    drawn = []
    against = plots.against

    def second_fails(*args, **kwargs):
        drawn.append(args)
        if len(drawn) == 2:
            raise OSError(errno.ENOSPC, NO_SPACE, str(args[5]))
        return against(*args, **kwargs)

    monkeypatch.setattr(plots, "against", second_fails)
    out = tmp_path / "out"
    error = one_line(main("reproduce", "lacp-hashing", "--quick", "--quiet", "--out", str(out)))
    assert error == f"error: --out: cannot write {out / 'lacp_16_flows.png'}: {NO_SPACE}", error
    assert not out.exists(), "nothing of it: the table and the first figure were written before the failure"
    out.mkdir()
    (out / "summary.md").write_text("an earlier reproduction")
    drawn.clear()
    one_line(main("reproduce", "lacp-hashing", "--quick", "--quiet", "--out", str(out)))
    assert files_in(out) == {"summary.md": b"an earlier reproduction"}
    monkeypatch.setattr(plots, "against", against)
    assert main("reproduce", "lacp-hashing", "--quick", "--quiet", "--out", str(out)).returncode == 0
    written = files_in(out)
    assert sorted(written) == [
        "fig6_rates.csv",
        "lacp_16_flows.png",
        "lacp_4_flows.png",
        "lacp_flows_per_link.csv",
        "summary.md",
        "verdicts.csv",
    ]
    assert written["summary.md"].decode().rstrip().endswith("*Quick size (`--quick`), what the tests run.*")


def test_reproduce_on_a_full_disk_writes_nothing(main, full_disk):
    out = full_disk / "lacp"
    out.mkdir()
    (out / "summary.md").write_text("an earlier reproduction")
    earlier = files_in(full_disk)
    error = one_line(main("reproduce", "lacp-hashing", "--quick", "--quiet", "--out", str(out)))
    assert error.startswith(f"error: --out: cannot write {out}/") and error.endswith(NO_SPACE), error
    assert files_in(full_disk) == earlier


@pytest.fixture
def six_mb_disk(tmp_path):
    """A 6 MB tmpfs: room for a results database and some runs, then full."""
    with tmpfs(tmp_path / "disk6", "6m") as disk:
        yield disk


def test_a_sweep_whose_database_fills_the_disk_keeps_what_it_committed(main, six_mb_disk, tmp_path):
    # issue 39: a full disk during `sweep --db` was a 29-line chained traceback ending in "cannot rollback"
    sweep = tmp_path / "fill.sweep.toml"
    sweep.write_text('base = "thesis"\nreplications = 40\n[set]\n"workload.requests" = 2000\n')
    db = six_mb_disk / "runs.duckdb"
    r = main("sweep", str(sweep), "--db", str(db), "--workers", "1", "--quiet")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    line = r.stderr.strip()
    assert line.startswith(f"error: {db}: cannot write the results database (") and "No space left" in line, line
    assert "the runs committed before are kept whole" in line, line
    # the database as the failure left it, on a disk with room: it opens, and the sweep resumes from it
    for part in six_mb_disk.iterdir():
        shutil.copy(part, tmp_path / part.name)
    moved = tmp_path / "runs.duckdb"
    kept = duckdb.connect(str(moved), read_only=True).execute("SELECT count(*) FROM runs").fetchone()[0]
    # (with commits made rarer where they are slow, sweeps.FLUSH_SHARE, the first commit is sometimes the
    # one that fills the disk: 0 kept once in the five full suites since that change, 13 when the test was written)
    assert 0 <= kept < 40, kept
    resumed = main("sweep", str(sweep), "--db", str(moved), "--workers", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"({kept} already stored)" in resumed.stderr or f"{40 - kept} run now, {kept} already stored" in resumed.stdout
    )
    with duckdb.connect(str(moved), read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT scenario_hash) FROM runs").fetchone() == (40, 40)
