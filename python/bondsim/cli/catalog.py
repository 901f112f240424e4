"""``bondsim schedulers`` and ``bondsim scenario``: what bondsim offers (its schedulers, its shipped
scenarios) and a scenario checked and shown as it runs."""

from __future__ import annotations

import argparse
import json

from bondsim import _core
from bondsim._core import BondsimError
from bondsim.cli.common import HelpFormatter, add_kernel, add_overrides


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    """``text`` in lines of at most ``width`` columns, each after ``indent``; a word is never broken (a
    parameter's name stays whole to copy), so only a word longer than the width makes a longer line."""
    import textwrap

    return textwrap.wrap(
        text,
        width=max(width, len(indent) + 20),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def cmd_schedulers(args: argparse.Namespace) -> int:
    import shutil

    entries = json.loads(_core.schedulers()) + json.loads(_core.mptcp_schedulers())
    if args.name:
        # `name[key=value,...]` as bond.mode takes it: the scheduler is the name
        name = args.name.split("[", 1)[0].strip()
        wanted = [e for e in entries if name in (e["name"], *e["aliases"])]
        if not wanted:
            names = ", ".join(e["name"] for e in entries)
            raise BondsimError(f"{args.name}: no such scheduler; registered: {names}")
        entries = wanted
    if args.json:
        print(json.dumps(entries if not args.name else entries[0], indent=2))
        return 0
    # Plain text wrapped to the terminal's width (COLUMNS, else 80 when piped): nothing is ever cut.
    width = shutil.get_terminal_size().columns
    lines = []
    if args.name:
        entry = entries[0]
        aliases = f" (also {', '.join(entry['aliases'])})" if entry["aliases"] else ""
        lines += _wrapped(f"{entry['name']}{aliases}: {entry['summary']}", width, "")
        lines += _wrapped(f"set as {entry['for']}", width, "")
        if not entry["params"]:
            lines.append("no parameters")
        else:
            lines += ["", *_wrapped("parameters (keys of [bond], or name[key=value,...]):", width, "")]
        for p in entry["params"]:
            lines += _wrapped(f"{p['name']} = {p['default']} (default)", width, "  ")
            lines += _wrapped(p["help"], width, "      ")
            lines += _wrapped(f"allowed: {p['allowed']}", width, "      ")
    else:
        headings = {
            "bond.mode": "registered schedulers (bond.mode); details: bondsim schedulers NAME",
            "sender.mptcp_scheduler": 'MPTCP packet schedulers (sender.mptcp_scheduler, with sender.kind = "mptcp")',
        }
        for field, heading in headings.items():
            lines += [""] * bool(lines) + _wrapped(heading, width, "")
            for entry in (e for e in entries if e["for"] == field):
                aliases = f" (also {', '.join(entry['aliases'])})" if entry["aliases"] else ""
                lines += ["", *_wrapped(f"{entry['name']}{aliases}", width, "")]
                lines += _wrapped(entry["summary"], width, "    ")
                if field == "bond.mode":
                    params = ", ".join(p["name"] for p in entry["params"]) or "none"
                    lines += _wrapped(f"parameters: {params}", width, "    ")
    print("\n".join(lines))
    return 0


def cmd_scenario_check(args: argparse.Namespace) -> int:
    from bondsim.scenario import load, to_toml

    doc = load(args.scenario, args.set, kernel=args.kernel)
    if args.json:
        print(json.dumps(doc, indent=2))
    elif not args.quiet:
        # the scenario as it runs, a TOML file that loads back to it (bondsim scenario check x > full.toml)
        links = sum(int(entry.get("count", 1)) for entry in doc["links"])
        ok = f"{args.scenario}: ok ({links} link{'s' * (links != 1)}, bond.mode={doc['bond']['mode']})"
        print(to_toml(doc, f"{ok}\nthe scenario as it runs: every default filled in"), end="")
    return 0


def cmd_scenario_list(args: argparse.Namespace) -> int:
    from bondsim.scenario import SHIPPED_COMMAND, describe, shipped, shipped_dir, shipped_names

    kinds = {kind: f"{kind}s ({command} NAME)" for kind, command in SHIPPED_COMMAND.items()}
    rows = [(kind, name, describe(shipped(name, kind))) for kind in kinds for name in shipped_names(kind)]
    if args.json:
        entries = [{"name": name, "kind": kind, "description": text} for kind, name, text in rows]
        print(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    width = max(len(name) for _, name, _ in rows)
    for kind, heading in kinds.items():
        print(f"{heading}:")
        for name, text in [(name, text) for of, name, text in rows if of == kind]:
            print(f"  {name:<{width}}  {text}".rstrip())
    print(f"their files (copy one to change it): {shipped_dir()}")
    return 0


def add_schedulers(sub: argparse._SubParsersAction) -> None:
    """``bondsim schedulers``."""
    p = sub.add_parser(
        "schedulers",
        help="list the bonding modes and schedulers, and MPTCP's",
        formatter_class=HelpFormatter,
        description="List every registered scheduler (the values of bond.mode, then MPTCP's packet schedulers, "
        "the values of sender.mptcp_scheduler), or one with its parameters.",
        epilog="examples:\n  bondsim schedulers\n  bondsim schedulers earliest-finish\n  bondsim schedulers blest\n"
        "  bondsim run thesis --set 'bond.mode=balance-rr[packets_per_slave=2]'\n"
        "  bondsim run mptcp --set sender.mptcp_scheduler=ecf",
    )
    p.add_argument("name", nargs="?", help="one scheduler (name or alias) to show in detail")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=cmd_schedulers)


def add_scenario(sub: argparse._SubParsersAction) -> None:
    """``bondsim scenario list`` and ``bondsim scenario check``."""
    p = sub.add_parser(
        "scenario",
        help="work with scenario files",
        formatter_class=HelpFormatter,
        description="List the scenarios bondsim ships; check scenario files against the schema.",
        epilog="examples:\n  bondsim scenario list\n  bondsim scenario check thesis --json",
    )
    scenario_sub = p.add_subparsers(dest="scenario_command", required=True, metavar="ACTION")
    c = scenario_sub.add_parser(
        "list",
        help="list the shipped scenarios and sweeps, each with its one-line description",
        formatter_class=HelpFormatter,
        description="List the scenarios and sweeps bondsim ships, by the name that runs them (bondsim run NAME, "
        "bondsim sweep NAME), each with the first line of its file's opening comment, and the folder that holds "
        "their files.",
        epilog="examples:\n  bondsim scenario list\n  bondsim run tcp_rr\n  bondsim scenario list --json",
    )
    c.add_argument("--json", action="store_true", help="print as JSON: name, kind (scenario or sweep), description")
    c.set_defaults(func=cmd_scenario_list)
    c = scenario_sub.add_parser(
        "check",
        help="check a scenario and show it with defaults filled in",
        formatter_class=HelpFormatter,
        description="Check a scenario file (and overrides) and print it as it runs, every default filled in, as "
        "TOML (a file that runs the same: bondsim scenario check NAME > full.toml) or with --json as JSON; exit 2 "
        "with the field's path if it is wrong.",
        epilog="examples:\n  bondsim scenario check thesis --set links.1.period_ms=40\n"
        "  bondsim scenario check tcp_rr --json",
    )
    c.add_argument("scenario", help="scenario TOML file, or a shipped one's name (bondsim scenario list)")
    add_overrides(c)
    add_kernel(c)
    c.add_argument("--json", action="store_true", help="print the checked scenario, defaults filled in, as JSON")
    c.add_argument("--quiet", action="store_true", help="print nothing but errors")
    c.set_defaults(func=cmd_scenario_check)
