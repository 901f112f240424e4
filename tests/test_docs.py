"""The documentation stays true: the reference pages are what the code gives (tools/gen_docs.py), every
relative link resolves, the README's quick start runs and prints what it shows (tools/quickstart.py),
and the hand-written pages name every scheduler and every TCP knob the code has."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import gen_docs
import pytest
import quickstart
from conftest import ROOT

from bondsim import _core

DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", ROOT / "ARCHITECTURE.md", *DOCS.rglob("*.md")])


def test_the_reference_pages_are_what_the_code_gives():
    stale = [
        str(path.relative_to(ROOT))
        for path, text in gen_docs.pages().items()
        if not path.exists() or path.read_text() != text
    ]
    assert not stale, f"out of date: {stale}; run `make docs` (.venv/bin/python tools/gen_docs.py) and commit them"


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (code marks and link targets dropped) in lower case,
    punctuation but `-` and `_` dropped, each space a `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def prose(text: str) -> list[str]:
    """The lines of a markdown text outside fenced code blocks, inline code spans blanked."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "``", line))
    return lines


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r"^#{1,6} (.*)$", line)
        if heading and not fenced:
            base = slug(heading.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [m for line in prose(path.read_text()) for m in re.findall(r"\]\(([^)\s]+)\)", line)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_and_heading(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        file, _, fragment = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT)}")
    assert not broken, broken


def test_the_link_check_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A `b`: c\n\n[ok](#a-b-c) [bad](#nothing) [gone](missing.md) `[code](not.md)`\n")
    assert links(page) == ["#a-b-c", "#nothing", "missing.md"]
    assert anchors(page) == {"a-b-c"}


def test_the_readme_starts_with_the_two_commands_that_set_everything_up():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[2:6] == [
        "```sh",
        "make demo    # set up .venv, build, reproduce the thesis's figures into out/thesis/",
        "make test    # set up .venv, build, lint, run the Rust and Python tests",
        "```",
    ]


def test_the_quick_start_runs_and_prints_what_the_readme_shows(tmp_path):
    """What .ci/run does with the wheel (tests/wheel_check.sh), here with this tree's build: the
    README's quick start commands run from an empty folder and print every line it shows."""
    why = quickstart.follow(Path(sys.executable).parent, tmp_path)
    assert why is None, why


def test_the_quick_start_check_sees_a_figure_that_moved():
    quick = quickstart.QuickStart("true", ["│ goodput │ 1,867 │", "│ stall │ 8 ms │"])
    printed = "title\n│ goodput │ 1,867 │\n│ stall │ 8 ms │\n"
    assert quickstart.missing(quick.shown, printed) is None
    assert quickstart.missing(quick.shown, printed.replace("1,867", "1,868")) == "│ goodput │ 1,867 │"
    # In the README's order: a line shown after another must be printed after it.
    assert quickstart.missing(quick.shown[::-1], printed) == "│ goodput │ 1,867 │"


def first_column(page: Path, header: str) -> set[str]:
    """The code words in the first column of the table under the header row `header`."""
    lines = page.read_text().splitlines()
    start = lines.index(header) + 2
    rows = [line for line in lines[start:] if line.startswith("|")]
    rows = rows[: next((i for i, line in enumerate(lines[start:]) if not line.startswith("|")), len(rows))]
    return {word for row in rows for word in re.findall(r"`([^`]+)`", row.split("|")[1])}


def test_the_schedulers_page_names_every_registered_mode_and_only_those():
    schedulers = json.loads(_core.schedulers())
    registered = {s["name"] for s in schedulers}
    aliases = {a for s in schedulers for a in s["aliases"]}
    named = first_column(DOCS / "schedulers.md", "| `bond.mode` | what |")
    assert registered - named == set(), "modes docs/schedulers.md does not describe"
    assert named - registered - aliases == set(), "names in docs/schedulers.md that are no mode"


def test_the_tcp_pages_name_every_tcp_knob():
    part = next(p for p in gen_docs.PARTS if p.path == "sender")
    text = (DOCS / "tcp.md").read_text() + (DOCS / "mptcp.md").read_text()
    for kind in ("tcp", "mptcp"):
        probe = gen_docs.resolve(part, {"kind": kind})
        fields = gen_docs.fields_of(part, probe.value)
        assert len(fields) > 30
        unnamed = [f for f in fields if f != "kind" and not re.search(rf"`(sender\.)?{f}\b", text)]
        assert not unnamed, f"sender fields of kind {kind} that docs/tcp.md and docs/mptcp.md never name"
