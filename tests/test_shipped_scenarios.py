"""The scenarios bondsim ships: package data (``bondsim/scenarios``) found through importlib.resources
wherever the package is installed, listed by ``bondsim scenario list``, and never shadowed by a folder of
the same name in the working folder (``bondsim reproduce thesis --out thesis`` makes one).

The wheel itself, installed into a fresh virtualenv, is tried by tests/wheel_check.sh (``make wheel-test``)."""

from __future__ import annotations

import importlib.resources
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SCENARIOS

import bondsim
from bondsim import ScenarioError
from bondsim.scenario import describe, find, load, shipped, shipped_dir, shipped_names

#: What a shipped file's name ends with, by kind.
SUFFIXES = {"scenario": ".toml", "sweep": ".sweep.toml"}


def files_of(kind: str) -> list[str]:
    """The names of the source tree's shipped files of ``kind``, read from the folder itself."""
    names = [p.name for p in SCENARIOS.glob("*.toml")]
    sweeps = sorted(n.removesuffix(".sweep.toml") for n in names if n.endswith(".sweep.toml"))
    return sweeps if kind == "sweep" else sorted(n.removesuffix(".toml") for n in names if ".sweep." not in n)


def test_the_shipped_files_are_package_data_found_through_importlib_resources():
    assert shipped_dir() == Path(str(importlib.resources.files("bondsim") / "scenarios"))
    assert shipped_dir() == Path(bondsim.__file__).parent / "scenarios" == SCENARIOS
    assert not (ROOT / "scenarios").exists(), "one folder of shipped scenarios: python/bondsim/scenarios"
    for kind in SUFFIXES:
        assert shipped_names(kind) == files_of(kind) != []
    assert {"thesis", "tcp_rr", "hetero", "league"} <= set(shipped_names())
    assert shipped_names("sweep") == ["thesis_load"]


@pytest.mark.parametrize("name", files_of("scenario"))
def test_every_shipped_scenario_resolves_by_name_from_any_folder_and_passes_the_schema(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find(name) == shipped(name) == SCENARIOS / f"{name}.toml"
    assert load(name)["name"] == name


def test_the_shipped_sweep_resolves_by_name_and_its_base_beside_it(tmp_path, monkeypatch):
    from bondsim.grid import load_sweep

    monkeypatch.chdir(tmp_path)
    assert find("thesis_load", kind="sweep") == shipped("thesis_load", "sweep") == SCENARIOS / "thesis_load.sweep.toml"
    plan = load_sweep("thesis_load")
    assert plan.name == "thesis_load" and plan.points[0].scenario["name"] == "thesis"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_file_opens_with_a_one_line_summary(path):
    """``bondsim scenario list`` shows the first line of each file's opening comment: it must be a
    summary of its own (a blank comment line after it, as a docstring's), short enough for one line."""
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# ") and lines[1] == "#", f"{path.name}: a summary line, then a blank `#` line"
    summary = describe(path)
    assert summary == lines[0][2:] and 20 <= len(summary) <= 100, summary


def test_describe_reads_the_opening_comment_only(tmp_path):
    (tmp_path / "a.toml").write_text("#\n#   Two links, one slow.  \n# more\nname = 'a'\n")
    (tmp_path / "b.toml").write_text("name = 'b'  # not a description\n")
    assert describe(tmp_path / "a.toml") == "Two links, one slow."
    assert describe(tmp_path / "b.toml") == ""


def test_scenario_list_shows_every_shipped_name_with_its_description(main):
    done = main("scenario", "list")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "scenarios (bondsim run NAME):"
    sweeps = lines.index("sweeps (bondsim sweep NAME):")
    width = max(map(len, shipped_names("scenario") + shipped_names("sweep")))
    expect = [f"  {name:<{width}}  {describe(SCENARIOS / f'{name}.toml')}" for name in files_of("scenario")]
    assert lines[1:sweeps] == expect
    assert lines[sweeps + 1 :] == [
        f"  {'thesis_load':<{width}}  {describe(SCENARIOS / 'thesis_load.sweep.toml')}",
        f"their files (copy one to change it): {SCENARIOS}",
    ]
    assert "  tcp_rr " in done.stdout and "TCP over a round-robin bond" in done.stdout


def test_scenario_list_json_names_kind_and_description(main):
    done = main("scenario", "list", "--json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    assert [(e["kind"], e["name"]) for e in entries] == [
        *(("scenario", n) for n in files_of("scenario")),
        *(("sweep", n) for n in files_of("sweep")),
    ]
    assert all(e["description"] for e in entries)
    help_text = main("scenario", "--help").stdout
    assert "list" in help_text and "check" in help_text


def test_a_folder_named_like_a_shipped_scenario_does_not_shadow_it(main, tmp_path, monkeypatch):
    """``bondsim reproduce thesis --out thesis`` made ``thesis/``; the name still means the shipped one."""
    monkeypatch.chdir(tmp_path)
    for name in ("thesis", "tcp_rr", "thesis_load"):
        (tmp_path / name).mkdir()
    assert find("thesis") == shipped("thesis") and load("thesis")["name"] == "thesis"
    assert find("thesis_load", kind="sweep") == shipped("thesis_load", "sweep")
    run = main("run", "tcp_rr", "--quiet", "--set", "workload.file_size.bytes=100000")
    assert run.returncode == 0, run.stderr
    check = main("scenario", "check", "thesis")
    assert check.returncode == 0 and check.stdout.startswith("# thesis: ok"), check.stderr
    sweep = main("sweep", "thesis_load", "--dry-run", "--db", str(tmp_path / "r.duckdb"))
    assert sweep.returncode == 0 and "every one checked; nothing run" in sweep.stdout, sweep.stderr


@pytest.mark.parametrize("shadow", ["its output folder", "a file of the user's"])
def test_a_reproduction_reads_the_shipped_scenario_whatever_the_working_folder_holds(
    main, tmp_path, monkeypatch, shadow
):
    """``bondsim reproduce thesis --out thesis``: the output folder (or any file) named like the scenario the
    reproduction reads leaves it reading the shipped one."""
    monkeypatch.chdir(tmp_path)
    out = "thesis"
    if shadow == "a file of the user's":
        (tmp_path / "thesis").write_text("not a scenario\n")
        out = "figures"
    done = main("reproduce", "thesis", "--out", out, "--quick", "--quiet")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / out / "summary.md").stat().st_size > 0


def test_a_folder_or_file_of_the_users_own_is_read_as_before(main, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    assert find("mine") == Path("mine")
    done = main("run", "mine")
    assert done.returncode == 2 and done.stderr == "error: scenario mine is a directory\n", done.stderr
    # a file the user names is read, even under a shipped scenario's name (it is what they typed)
    (tmp_path / "thesis").write_text(shipped("thesis").read_text().replace('name = "thesis"', 'name = "mine"'))
    assert find("thesis") == Path("thesis") and load("thesis")["name"] == "mine"


def test_a_name_that_is_not_shipped_names_what_is_and_the_other_kind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as info:
        shipped("nosuch")
    assert str(info.value) == f"nosuch: not a shipped scenario ({', '.join(shipped_names())})"
    with pytest.raises(ScenarioError) as info:
        find("thesis_load")
    assert str(info.value).endswith("; thesis_load is a shipped sweep, run by bondsim sweep")
    with pytest.raises(ScenarioError) as info:
        find("tcp_rr", "base", kind="sweep")
    assert info.value.path == "base"
    assert str(info.value) == (
        "base: tcp_rr: not a file, and not a shipped sweep (thesis_load); "
        "tcp_rr is a shipped scenario, run by bondsim run"
    )


def test_an_installed_copy_of_the_package_finds_its_scenarios_away_from_the_source_tree(tmp_path):
    """The package copied as pip lays it out (``site/bondsim``, its scenario files inside, no source
    tree above it), run from an empty folder: the shipped names resolve inside the copy."""
    site = tmp_path / "site"
    shutil.copytree(Path(bondsim.__file__).parent, site / "bondsim", ignore=shutil.ignore_patterns("__pycache__"))
    user = tmp_path / "user"
    user.mkdir()
    (user / "thesis").mkdir()
    code = """
import sys
from bondsim.cli import main
import bondsim.scenario as s
print(s.__file__)
print(s.shipped_dir())
sys.exit(main(["run", "tcp_rr", "--quiet", "--set", "workload.file_size.bytes=100000"])
         or main(["reproduce", "thesis", "--out", "thesis", "--quick", "--quiet"]))
"""
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=user, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(site / "bondsim" / "scenario.py"), str(site / "bondsim" / "scenarios")]
    assert (user / "thesis" / "summary.md").exists()
