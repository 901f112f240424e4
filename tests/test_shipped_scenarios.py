"""The scenarios bondsim ships, by name: never shadowed by a folder of the same name in the working folder
(``bondsim reproduce thesis --out thesis`` makes one), and the reproductions read them whatever it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from bondsim import ScenarioError
from bondsim.scenario import find, load, shipped, shipped_names


def test_a_folder_named_like_a_shipped_scenario_does_not_shadow_it(main, tmp_path, monkeypatch):
    """``bondsim reproduce thesis --out thesis`` made ``thesis/``; the name still means the shipped one."""
    monkeypatch.chdir(tmp_path)
    for name in ("thesis", "tcp_rr"):
        (tmp_path / name).mkdir()
    assert find("thesis") == shipped("thesis") and load("thesis")["name"] == "thesis"
    run = main("run", "tcp_rr", "--quiet", "--set", "workload.file_size.bytes=100000")
    assert run.returncode == 0, run.stderr
    check = main("scenario", "check", "thesis")
    assert check.returncode == 0 and check.stdout.startswith("thesis: ok"), check.stderr


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


def test_a_name_that_is_not_shipped_names_what_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as info:
        shipped("nosuch", "base")
    assert info.value.path == "base"
    assert str(info.value) == f"base: nosuch: not a shipped scenario ({', '.join(shipped_names())})"
