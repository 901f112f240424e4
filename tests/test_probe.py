"""The bad-input probe (issue 39): every field of every shipped scenario, given values no such field can
take, through ``bondsim scenario check NAME --set PATH=VALUE`` as a user types it. Each must be refused
in one line naming the field (exit 2): no traceback, no crash, and no silent acceptance, except the
pairs :data:`ACCEPTED` lists, each with why it is a real setting.

The corpus is made from the schema itself (each shipped scenario checked, with every default filled in),
so a field added to the schema is probed without a word here. Its size and counts are printed by
``.venv/bin/python tests/test_probe.py``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections import Counter

import pytest

from bondsim.cli import main
from bondsim.scenario import check, load

#: The shipped scenarios the probe starts from: between them, every part of the schema.
BASES = (
    "thesis",
    "tcp_rr",
    "failover",
    "failover_udp",
    "mptcp",
    "league",
    "pingpong",
    "lacp_flows",
    "xor_clients",
    "hetero",
    "kernel_league",
    "emulate_rr",
)

#: Values no field of each kind can take (TOML as typed after ``--set PATH=``).
NONSENSE = {
    "int": ["-1", "1.5", "nan", "inf", "-inf", "1e300", "18446744073709551616", '"text"', "true", "[]", "{}"],
    "float": ["-1", "nan", "inf", "-inf", "1e300", '"text"', "true", "[]", "{}"],
    "str": ["1", "true", "[]", "{}", '"no such thing"', '""'],
    "bool": ["1", '"yes"', "[]", "{}"],
    "list": ['"text"', "1", "true", "{}"],
}

#: (field, value) pairs that are real settings, each with why (``links.N`` stands for any link).
ACCEPTED = {
    ("name", '"no such thing"'): "a scenario's name is free text",
    ("name", '""'): "no name: what a scenario that gives none has (the default)",
}


def leaves(doc, path: str = ""):
    """Every scalar field (and list of scalars) of a checked scenario: (dotted path, value)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from leaves(value, f"{path}.{key}" if path else key)
    elif isinstance(doc, list) and doc and all(isinstance(v, dict | list) for v in doc):
        for i, value in enumerate(doc):
            yield from leaves(value, f"{path}.{i}")
    else:
        yield path, doc


def kind(value) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list"}.get(type(value), "none")


def general(path: str) -> str:
    """``links.3.failures.0.down_s`` -> ``links.N.failures.N.down_s``: what ACCEPTED names."""
    return ".".join("N" if part.isdigit() else part for part in path.split("."))


def corpus() -> list[tuple[str, str, str]]:
    """(base scenario, field, value): each field once, from the first base that has it."""
    seen: dict[str, str] = {}
    cases = []
    for base in BASES:
        for path, value in leaves(check(load(base))):
            if path in seen or kind(value) == "none":
                continue
            seen[path] = base
            cases.extend((base, path, text) for text in NONSENSE[kind(value)])
    return cases


CASES = corpus()


def probe(base: str, path: str, value: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["scenario", "check", base, "--quiet", "--set", f"{path}={value}"])
        except SystemExit as exc:
            code = exc.code
    return code, err.getvalue()


def outcome(code: int, err: str) -> str:
    if "Traceback" in err or code not in (0, 2):
        return "crash"
    if code == 0:
        return "accepted"
    lines = err.strip().splitlines()
    return "refused" if len(lines) == 1 and lines[0].startswith("error: ") else "crash"


def test_the_probe_is_at_least_as_large_as_the_issues():
    assert len(CASES) >= 645, len(CASES)


@pytest.mark.parametrize("chunk", range(4))
def test_no_nonsense_is_taken_and_every_refusal_is_one_line_naming_the_field(chunk):
    wrong = []
    for base, path, value in CASES[chunk::4]:
        code, err = probe(base, path, value)
        got = outcome(code, err)
        expected = "accepted" if (general(path), value) in ACCEPTED else "refused"
        if got != expected:
            wrong.append(f"{base} --set {path}={value}: {got}, exit {code}: {err.strip()[:200]}")
        elif got == "refused":
            # the error names the field (its own path, a part of it, or the value's own path below it)
            named = err.split(":", 2)[1].strip()
            if not (path.startswith(named) or named.startswith(path) or named in ("--set", "")):
                wrong.append(f"{base} --set {path}={value}: names `{named}`: {err.strip()[:200]}")
    assert not wrong, f"{len(wrong)} of {len(CASES[chunk::4])}:\n" + "\n".join(wrong[:40])


if __name__ == "__main__":
    counts = Counter(outcome(*probe(*case)) for case in CASES)
    print(f"{len(CASES)} inputs over {len({c[1] for c in CASES})} fields: {dict(counts)}", file=sys.stderr)
