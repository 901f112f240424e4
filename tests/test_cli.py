"""The command line, end to end, as a user types it."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tomllib

import pandas as pd
import pytest
from conftest import SCENARIOS


def test_run_writes_outputs_and_prints_a_table(cli, tmp_path, thesis_toml):
    out = tmp_path / "rr"
    proc = cli("run", str(thesis_toml), "--out", str(out), "--set", "workload.requests=30")
    assert proc.returncode == 0, proc.stderr
    assert "out of order" in proc.stdout and "balance-rr" in proc.stdout
    files = ("summary.json", "requests.csv", "links.csv", "scenario.json", "process.txt")
    assert f"wrote {', '.join(files)} to {out}" in " ".join(proc.stdout.split())
    assert sorted(p.name for p in out.iterdir()) == sorted(files), "every file written is listed"
    summary = json.loads((out / "summary.json").read_text())
    for key in (
        "scheduler",
        "requests",
        "packets",
        "in_order",
        "out_of_order",
        "ooo_fraction",
        "makespan_s",
        "events",
        "wall_s",
    ):
        assert key in summary
    assert [link["packets_sent"] for link in summary["links"]] == [758, 758, 757, 757]
    assert summary["in_order"] + summary["out_of_order"] == summary["packets"] == 30 * 101
    requests = pd.read_csv(out / "requests.csv")
    assert list(requests.columns[:7]) == [
        "request",
        "client",
        "file_bytes",
        "packets",
        "received",
        "in_order",
        "out_of_order",
    ]
    assert len(requests) == 30 and requests["out_of_order"].sum() == summary["out_of_order"]
    with (out / "links.csv").open() as f:
        links = list(csv.DictReader(f))
    assert [int(r["packets_sent"]) for r in links] == [758, 758, 757, 757]
    assert json.loads((out / "scenario.json").read_text())["workload"]["requests"] == 30


def test_json_flag_prints_only_the_summary(cli):
    proc = cli("run", "thesis", "--set", "bond.mode=lb", "--set", "workload.requests=50", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["scheduler"] == "lb" and summary["requests"] == 50


def test_bad_input_is_one_line_exit_2_no_traceback(cli):
    for args, says in [
        (["run", "thesis", "--set", "links.1.perod_ms=4"], "links.1.perod_ms: unknown field"),
        (["run", "thesis", "--set", "bond.mode=xx"], "bond.mode: unknown scheduler `xx`"),
        (["run", "thesis", "--set", "workload.requests=zero"], "workload.requests: must be a whole number"),
        (["run", "no/such.toml"], "no/such.toml: not a file, and not a shipped scenario (emulate_rr, failover,"),
        (["run", "tcp_r"], "tcp_r: not a file, and not a shipped scenario (emulate_rr, failover,"),
        (["run", "tcp_r"], "; did you mean tcp_rr?"),
        # a shipped scenario is a plain name: no path climbs out of the shipped folder (to the project's pyproject.toml)
        (["scenario", "check", "../pyproject"], "../pyproject: not a file, and not a shipped scenario ("),
        (["scenario", "check", "nosuch"], "nosuch: not a file, and not a shipped scenario ("),
        (["scenario", "check", "thesis", "--set", "links.0.period_ms=0"], "links.0.period_ms: must be"),
        (["run", "hetero", "--set", "links.0.loss=1.5"], "links.0.loss: must be in [0, 1), got 1.5"),
        (["scenario", "check", "thesis", "--set", "links.1.period_ms=1e-7"], "links.1.period_ms: must be at least"),
        (["run", "thesis", "--set", "links.1.period_ms=1e-300"], "links.1.period_ms: must be at least 1 ns"),
        (["run", "hetero", "--set", "links.0.rate_mbps=1e7"], "links.0.rate_mbps: must be from 0.0003 to 1600000"),
        (["run", "thesis", "--set", "max_events=1000"], "max_events: the run took more than max_events = 1000"),
        (["run", "hetero", "--set", "links.0.rate_mbps=nan"], "links.0.rate_mbps: must be a finite number, got NaN"),
        (["scenario", "check", "hetero", "--set", "links.1.delay_us=inf"], "links.1.delay_us: must be a finite"),
    ]:
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.strip() == proc.stderr.strip().splitlines()[0]
        assert proc.stderr.startswith("error: ") and says in proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stdout == ""


def assert_one_line_error(proc, says: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_files_that_are_not_utf8_or_of_the_wrong_shape_are_one_line_exit_2(cli, tmp_path):
    (tmp_path / "latin1.toml").write_bytes('name = "café"\n'.encode("latin-1"))
    (tmp_path / "latin1.sweep.toml").write_bytes('base = "thesis"\nname = "é"\n'.encode("latin-1"))
    (tmp_path / "links5.toml").write_text((SCENARIOS / "thesis.toml").read_text() + "\n")
    for args, says in [
        (["run", str(tmp_path / "latin1.toml")], "latin1.toml: not UTF-8 text (byte 0xe9 on line 1)"),
        (["scenario", "check", str(tmp_path / "latin1.toml")], "not UTF-8 text"),
        (["sweep", str(tmp_path / "latin1.sweep.toml"), "--dry-run"], "latin1.sweep.toml: not UTF-8 text (byte 0xe9"),
        (["run", "thesis", "--set", "links=5"], "links: must be a list, in [ ], got 5"),
        (["run", "thesis", "--set", "workload=5"], "workload: must be a table of fields, got 5"),
        (["scenario", "check", "thesis", "--set", "links=[5]"], "links.0: must be a table of fields, got 5"),
    ]:
        assert_one_line_error(cli(*args), says)


def test_outputs_that_cannot_be_written_are_one_line_exit_2(cli, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    run_dir = tmp_path / "run"
    assert cli("run", "thesis", "--quiet", "--set", "workload.requests=2", "--out", str(run_dir)).returncode == 0
    for args, says in [
        (["run", "thesis", "--out", str(a_file)], "--out: " + str(a_file) + " exists and is not a directory"),
        (["run", "thesis", "--out", str(a_file / "sub")], f"--out: cannot create {a_file / 'sub'}: {a_file} is a file"),
        (["run", "thesis", "--set", "workload.requests=2", "--out", "/proc/bondsim"], "--out: cannot write"),
        (["reproduce", "thesis", "--out", str(a_file / "sub")], "--out: cannot create"),
        (
            ["plot", str(run_dir), "--out", str(tmp_path)],
            f"give a file name (e.g. {tmp_path}/figure.png)",
        ),
        (
            ["report", str(run_dir), "--out", str(tmp_path)],
            f"give a file name (e.g. {tmp_path}/report.html)",
        ),
        (["report", str(run_dir), "--out", str(tmp_path / "x.png")], "a report is one HTML file; give a name ending"),
        (["plot", str(run_dir), "--out", str(a_file / "x.png")], "--out: cannot create"),
        (["plot", str(run_dir), "--out", str(tmp_path / "x.nosuchformat")], "Format 'nosuchformat' is not supported"),
        (["runs", "export", str(a_file), "--db", str(tmp_path / "none.duckdb")], "out: " + str(a_file) + " exists"),
    ]:
        assert_one_line_error(cli(*args), says)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "run"]  # nothing half-written


def test_a_run_directory_with_a_damaged_table_is_one_line_exit_2(cli, tmp_path):
    run_dir = tmp_path / "run"
    args = (
        "run",
        "thesis",
        "--quiet",
        "--set",
        "workload.requests=2",
        "--set",
        "trace.packets=20",
        "--out",
        str(run_dir),
    )
    assert cli(*args).returncode == 0
    (run_dir / "requests.csv").write_text("x,y\n1,2\n")
    assert_one_line_error(
        cli("plot", str(run_dir), "--out", str(tmp_path / "p.png")), "(a table has no column 'packets')"
    )
    (run_dir / "packet_trace.csv").write_text("")
    says = "not a run directory as bondsim run --out writes it (a table has no column"
    assert_one_line_error(cli("report", str(run_dir), "--out", str(tmp_path / "r.html")), says)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # nothing half-written


def test_plot_and_report_make_their_output_folder_as_run_does(cli, tmp_path):
    run_dir = tmp_path / "run"
    assert cli("run", "thesis", "--quiet", "--set", "workload.requests=2", "--out", str(run_dir)).returncode == 0
    for command, out in [("plot", tmp_path / "new" / "sub" / "p.png"), ("report", tmp_path / "new" / "r" / "x.html")]:
        proc = cli(command, str(run_dir), "--out", str(out), "--quiet")
        assert proc.returncode == 0 and out.stat().st_size > 0, proc.stderr


def test_random_loss_is_counted_among_drops_by_cause(cli, tmp_path):
    out = tmp_path / "lossy"
    proc = cli("run", "hetero", "--set", "workload.requests=2", "--set", "links.0.loss=0.05", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["drops_random"] > 0
    # Nothing else drops here: every lost packet was lost on the wire, and each flow ended.
    assert summary["dropped"] == summary["drops_random"]
    assert summary["delivered"] + summary["dropped"] == summary["packets"]
    # A flow that lost packets has ended but is not complete: the summary says how many of each.
    requests = pd.read_csv(out / "requests.csv")
    assert summary["flows_with_loss"] == (requests["lost"] > 0).sum() > 0
    assert summary["flows_complete"] == (requests["received"] == requests["packets"]).sum()
    assert summary["flows_complete"] + summary["flows_with_loss"] == summary["requests"]
    links = pd.read_csv(out / "links.csv").set_index("name")
    assert links.loc["ge", "drops_random"] == summary["drops_random"] and links.loc["fe", "drops_random"] == 0
    assert json.loads((out / "scenario.json").read_text())["links"][0]["loss"] == 0.05
    # The same seed loses the same frames.
    again = cli("run", "hetero", "--set", "workload.requests=2", "--set", "links.0.loss=0.05", "--json")
    assert json.loads(again.stdout)["drops_random"] == summary["drops_random"]


def test_argument_errors_exit_2(cli):
    proc = cli("run")
    assert proc.returncode == 2 and "usage:" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [("scenario", "check", "thesis", "thesis"), ("run", "thesis", "--nosuch"), ("runs", "list", "extra")],
)
def test_an_argument_too_many_is_named_by_the_command_it_was_given_to(main, args):
    """argparse said "bondsim: error: unrecognized arguments" under the top level's usage."""
    proc = main(*args)
    command = "bondsim " + " ".join(a for a in args if a.isalpha() and a not in ("thesis", "extra"))
    assert proc.returncode == 2
    assert f"usage: {command} " in proc.stderr, proc.stderr
    assert f"{command}: error: unrecognized arguments: {args[-1]}" in proc.stderr, proc.stderr


def _commands(parser, words=()):
    """Every command and subcommand of ``parser``, as the words that name it (``()`` for bondsim itself)."""
    import argparse

    yield words
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*words, name))


def test_every_command_has_help_with_an_example(main):
    from bondsim.cli import build_parser

    commands = list(_commands(build_parser()))
    assert ("emulate",) in commands and ("runs", "export") in commands and len(commands) >= 18, commands
    for words in commands:
        proc = main(*words, "--help")
        assert proc.returncode == 0, (words, proc.stderr)
        assert "example" in proc.stdout and "bondsim " in proc.stdout.split("example")[1], words
        assert "%%" not in proc.stdout, "a %% that argparse does not format (descriptions are printed as written)"


def test_schedulers_lists_registry(cli):
    proc = cli("schedulers", "--json")
    entries = {e["name"]: e for e in json.loads(proc.stdout)}
    assert entries["balance-rr"]["aliases"] == ["rr", "0"]
    assert entries["balance-rr"]["params"][0]["name"] == "packets_per_slave"
    assert "lb" in entries
    table = cli("schedulers").stdout
    assert all(name in table for name in entries)
    assert "usable[" in table, "summaries are printed as text, not rich markup"
    detail = cli("schedulers", "xor")
    assert detail.returncode == 0 and "xmit_hash_policy" in detail.stdout and "layer3+4" in detail.stdout
    one = json.loads(cli("schedulers", "flowlet", "--json").stdout)
    assert one["name"] == "flowlet" and one["params"][0]["name"] == "gap_us"
    missing = cli("schedulers", "nope")
    assert missing.returncode == 2 and missing.stderr.startswith("error: nope: no such scheduler")
    # MPTCP's packet schedulers follow, each saying which field takes it and whether Linux has it.
    mptcp = [e for e in json.loads(proc.stdout) if e["for"] == "sender.mptcp_scheduler"]
    from bondsim import _core

    assert all(e["for"] == "bond.mode" for e in json.loads(_core.schedulers())), "bond.mode's list stays the bond's"
    assert [e["name"] for e in mptcp] == ["default", "minrtt", "roundrobin", "redundant", "blest", "ecf"]
    assert [e["upstream"] for e in mptcp] == [True] + [False] * 5
    assert table.index("MPTCP packet schedulers") < table.index("Ferlin")
    blest = cli("schedulers", "blest").stdout
    assert "set as sender.mptcp_scheduler" in blest and "Not upstream" in blest


def test_scenario_check_prints_defaults(cli):
    proc = cli("scenario", "check", "thesis", "--json")
    doc = json.loads(proc.stdout)
    assert doc["sender"]["packets_per_tick"] == 4
    assert cli("scenario", "check", "thesis").stdout.startswith("# thesis: ok (4 links, bond.mode=rr)\n")


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.toml") if not p.stem.endswith(".sweep")))
def test_scenario_check_prints_the_resolved_scenario_as_toml_that_runs_the_same(main, tmp_path, name):
    """What its help says: the scenario with every default filled in, here as a TOML file that loads back to
    the very scenario (``bondsim scenario check NAME > full.toml``)."""
    from bondsim.scenario import load

    proc = main("scenario", "check", name, "--set", "seed=3")
    assert proc.returncode == 0, proc.stderr
    written = tmp_path / "full.toml"
    written.write_text(proc.stdout)
    checked = load(name, ["seed=3"])
    assert tomllib.loads(proc.stdout) == checked, "every field, every default, as the check gives them"
    assert load(written) == checked
    assert f"bond.mode={checked['bond']['mode']})" in proc.stdout.splitlines()[0]


@pytest.mark.parametrize(
    "args",
    [
        ["scenario", "check", "tcp_rr"],
        ["scenario", "check", "tcp_rr", "--json"],
        ["schedulers"],
        ["schedulers", "--json"],
        ["scenario", "list"],
        ["run", "thesis", "--set", "workload.requests=5", "--json"],
    ],
)
def test_a_reader_that_stops_reading_ends_the_command_quietly(args):
    """``bondsim ... | head``: once the reader has gone, no traceback and no message, as a Unix tool; the exit
    status is a Unix tool's killed by SIGPIPE (141). The pipe is closed before the command writes: every
    write fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bondsim.cli", *args], stdout=write, stderr=subprocess.PIPE, text=True, timeout=300
        )
    finally:
        os.close(write)
    assert proc.stderr == "", proc.stderr
    assert proc.returncode == 141


def test_schedulers_are_never_cut_whatever_the_width(cli):
    """Every scheduler's name, aliases, whole summary and parameter names are in the list at any width (rich's
    table cut words at 80 columns when piped: rebalance_interval_s, Cut-off-Least-Queue:), and no line is
    longer than the width unless one word is."""
    entries = json.loads(cli("schedulers", "--json").stdout)
    for width in (40, 80, 200):
        env = {**os.environ, "COLUMNS": str(width)}
        out = subprocess.run(
            [sys.executable, "-m", "bondsim.cli", "schedulers"], capture_output=True, text=True, env=env
        ).stdout
        words = out.split()
        for entry in entries:
            for word in [entry["name"], *entry["summary"].split(), *(p["name"] for p in entry["params"])]:
                assert word in words or word + "," in words, f"{width}: {word!r} cut"
        assert all(len(line) <= width or " " not in line.strip() for line in out.splitlines()), width
        detail = subprocess.run(
            [sys.executable, "-m", "bondsim.cli", "schedulers", "ovs:balance-slb"],
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        assert "bond_rebalance_interval" in detail.split(), width


def test_an_option_the_mode_ignores_is_a_warning_naming_it(cli):
    """Another mode's parameter in the bond table is taken (one table serves a sweep over modes) and said, one
    line on stderr naming the field, whatever the mode; its own parameters are not."""
    rr = cli("scenario", "check", "thesis", "--set", "bond.xmit_hash_policy=layer3+4", "--quiet")
    assert rr.returncode == 0
    assert rr.stderr == (
        "warning: bond.xmit_hash_policy: balance-rr ignores it: it is a parameter of balance-xor, 802.3ad, "
        "balance-tlb, balance-alb (`bondsim schedulers NAME`)\n"
    )
    xor = cli("scenario", "check", "thesis", "--set", "bond.mode=xor", "--set", "bond.xmit_hash_policy=layer3+4")
    assert xor.returncode == 0 and xor.stderr == ""
    ab = cli("run", "thesis", "--set", "bond.mode=ab", "--set", "bond.packets_per_slave=3", "--quiet")
    assert ab.returncode == 0
    assert ab.stderr.startswith("warning: bond.packets_per_slave: active-backup ignores it: it is a parameter of")
    # its value is checked all the same
    bad = cli("scenario", "check", "thesis", "--set", "bond.xmit_hash_policy=layer9")
    assert bad.returncode == 2 and bad.stderr.startswith("error: bond.xmit_hash_policy: must be one of")
    # 802.3ad's min_links: ignored (said) elsewhere; above the bond's links, a bond that never carries a packet
    rr = cli("scenario", "check", "failover", "--set", "bond.mode=rr", "--set", "bond.min_links=9", "--quiet")
    assert rr.returncode == 0 and rr.stderr.startswith("warning: bond.min_links: balance-rr ignores it")
    never = "error: bond.min_links: is 9, above the bond's 2 links: the bond would never carry a packet"
    for sets in (["bond.mode=802.3ad[min_links=9]"], ["bond.mode=lacp", "bond.min_links=9"]):
        lacp = cli("scenario", "check", "failover", *(a for item in sets for a in ("--set", item)))
        assert lacp.returncode == 2 and lacp.stderr.startswith(never), lacp.stderr


def test_kernel_preset_sets_the_tcp_senders_fields_before_the_users_overrides(cli):
    def check(*args):
        proc = cli("scenario", "check", "tcp_rr", "--json", *args)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["sender"]

    old = check("--kernel", "linux-3.x")
    assert (old["tcp_recovery"], old["tcp_fack"], old["tcp_max_reordering"], old["tlp_timeout"]) == (
        0,
        True,
        127,
        "linux-3.10",
    )
    assert old["early_retransmit"] and old["ncr"] and old["forward_retransmit"]
    assert (old["undo"], old["small_queues"], old["tcp_limit_output_bytes"]) == ("linux-3.13", "linux-3.12", 131072)
    mine = check("--kernel", "linux-3.x", "--set", "sender.tcp_fack=false")
    assert (mine["tcp_fack"], mine["ncr"]) == (False, True), "--set wins over the preset"
    # A field valid only beside the preset's others (FACK needs its tcp_recovery = 0).
    mine = check("--kernel", "linux-3.x", "--set", 'sender.undo="linux-3.15"', "--set", "sender.ncr=false")
    assert (mine["undo"], mine["ncr"], mine["tcp_recovery"]) == ("linux-3.15", False, 0)
    assert check("--kernel", "linux-3.x", "--set", "sender.tcp_fack=true")["tcp_fack"]
    assert check("--kernel", "modern") == check(), "modern: the defaults"
    refused = cli("scenario", "check", "thesis", "--kernel", "linux-3.x")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: sender.kind: the kernel preset linux-3.x sets the TCP sender's fields")
    rack_again = cli("scenario", "check", "tcp_rr", "--kernel", "linux-3.x", "--set", "sender.tcp_recovery=1")
    assert rack_again.returncode == 2 and "(the kernel preset linux-3.x sets sender.tcp_fack)" in rack_again.stderr


def test_kernel_linux_2_6_is_3xs_loss_detection_without_what_3x_added(cli):
    def check(*args):
        proc = cli("scenario", "check", "tcp_rr", "--json", *args)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["sender"]

    old, three = check("--kernel", "linux-2.6"), check("--kernel", "linux-3.x")
    same = ["tcp_recovery", "tcp_fack", "tcp_max_reordering", "ncr", "forward_retransmit", "undo", "ts_clock"]
    assert [old[f] for f in same] == [three[f] for f in same] == [0, True, 127, True, True, "linux-3.13", "linux-4.12"]
    assert (old["tcp_early_retrans"], old["early_retransmit"], old["small_queues"]) == (0, False, "linux-3.5")
    assert (old["cwnd_reduction"], old["initial_cwnd"], old["tcp_congestion_control"]) == ("rate-halving", 3, "cubic")
    assert (three["cwnd_reduction"], three["initial_cwnd"]) == ("prr", 10), "each preset sets the other's fields back"
    mine = check("--kernel", "linux-2.6", "--set", 'sender.cwnd_reduction="prr"')
    assert (mine["cwnd_reduction"], mine["small_queues"]) == ("prr", "linux-3.5"), "--set wins over the preset"
    rack_again = cli("scenario", "check", "tcp_rr", "--kernel", "linux-2.6", "--set", "sender.tcp_recovery=1")
    assert rack_again.returncode == 2 and "(the kernel preset linux-2.6 sets" in rack_again.stderr


def test_kernel_preset_replaces_what_the_file_set_of_its_fields(cli, tmp_path):
    # A file written for 3.x, run as today's kernel: modern puts the fields back to their defaults.
    scenario = tmp_path / "old.toml"
    scenario.write_text(
        (SCENARIOS / "tcp_rr.toml")
        .read_text()
        .replace('kind = "tcp"', 'kind = "tcp"\ntcp_recovery = 0\ntcp_fack = true')
    )
    assert cli("scenario", "check", str(scenario)).returncode == 0
    as_written = json.loads(cli("scenario", "check", str(scenario), "--json").stdout)["sender"]
    modern = json.loads(cli("scenario", "check", str(scenario), "--kernel", "modern", "--json").stdout)["sender"]
    defaults = json.loads(cli("scenario", "check", "tcp_rr", "--json").stdout)["sender"]
    assert (as_written["tcp_recovery"], as_written["tcp_fack"]) == (0, True)
    assert modern == defaults


def test_the_python_api_takes_a_kernel_preset_with_overrides_of_any_iterable():
    from bondsim.scenario import load

    overrides = (item for item in ["sender.tcp_fack=false"])
    sender = load("tcp_rr", overrides, kernel="linux-3.x")["sender"]
    assert (sender["tcp_recovery"], sender["tcp_fack"]) == (0, False)


def test_run_with_a_kernel_preset_is_the_run_with_its_fields_set(cli):
    from bondsim import kernels

    small = ["--set", "workload.requests=2", "--set", 'workload.file_size={kind="fixed", bytes=1000000}', "--json"]

    def summary(*args):
        proc = cli("run", "tcp_rr", *small, *args)
        assert proc.returncode == 0, proc.stderr
        return {k: v for k, v in json.loads(proc.stdout).items() if k != "wall_s"}

    today = summary()
    for era in ("linux-3.x", "linux-2.6"):
        by_name = summary("--kernel", era)
        by_fields = summary(*(arg for field in kernels.TCP[era] for arg in ("--set", field)))
        assert by_name == by_fields, era
        assert by_name["tcp_spurious_retransmits"] != today["tcp_spurious_retransmits"], f"{era} is not today's TCP"


def test_reproduce_thesis_writes_figures_and_summary(cli, tmp_path):
    proc = cli("reproduce", "thesis", "--out", str(tmp_path), "--quiet")
    assert proc.returncode == 0, proc.stderr
    for name in ("fig9_fixed_100kb", "fig10_varied_sizes", "fig11_p_outorder"):
        assert (tmp_path / f"{name}.csv").stat().st_size > 0
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    fig9 = pd.read_csv(tmp_path / "fig9_fixed_100kb.csv")
    assert set(fig9["mode"]) == {"rr", "lb"} and len(fig9) == 40
    text = (tmp_path / "summary.md").read_text()
    assert "Figure 9" in text and "Figure 11" in text and "thesis" in text


def test_plot_compares_runs_like_the_thesis_plot_sh(cli, tmp_path):
    varied = ["--set", 'workload.file_size={kind = "zipfset", classes = [1, 2], popularity = "uniform"}']
    for mode in ("rr", "lb"):
        proc = cli("run", "thesis", "--quiet", "--out", str(tmp_path / mode), "--set", f"bond.mode={mode}", *varied)
        assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "rr" / "process.txt").read_text().splitlines()
    assert lines[0] == "Packets\tEntries\tAverage\tP(outorder)"
    requests = pd.read_csv(tmp_path / "rr" / "requests.csv")
    assert sum(int(line.split("\t")[1]) for line in lines[1:]) == len(requests)
    png = tmp_path / "cmp.png"
    proc = cli("plot", str(tmp_path / "rr"), str(tmp_path / "lb"), "--out", str(png), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    bad = cli("plot", str(tmp_path / "missing"), "--out", str(png))
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "not a run directory" in bad.stderr


def test_long_runs_show_progress_lines_when_output_is_piped(capsys):
    from bondsim.progress import Bar

    def run_bar(**options) -> Bar:  # as bondsim run makes it, its first report shown at once
        options = {"unit": "packets delivered or lost", "detail": lambda s: f", simulated {s:,.1f} s"} | options
        return Bar("running x", 0, options.pop("enabled", True), **options)

    progress = run_bar(every_s=0.0)
    progress(25, 100, 1.5)  # the core's callback: packets done, packets in all, simulated seconds
    progress(50, 100, 3.0)
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "running x: 25/100 packets delivered or lost, simulated 1.5 s, 0 s elapsed",
        "running x: 50/100 packets delivered or lost, simulated 3.0 s, 0 s elapsed",
    ]
    waiting = run_bar(every_s=60.0)  # a line every minute: one so far
    waiting(1, 100, 0.1)
    waiting(2, 100, 0.2)
    quiet = run_bar(enabled=False)
    quiet(1, 100, 0.1)
    late = run_bar(after_s=60.0)  # nothing in the first minute
    late(1, 100, 0.1)
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_progress_in_a_log_says_the_first_thing_done_at_once_then_every_few_seconds(monkeypatch, capsys):
    from bondsim import progress

    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    bar = progress.Bar("sweep s", 3, True)  # a sweep's: every 2 s (LOG_EVERY_S), nothing held back
    bar.update(0)  # nothing done, nothing due: silent
    clock[0] += 2.5
    bar.update(0)  # 2.5 s with nothing done: alive
    bar.update(1)  # the first run: at once
    bar.update(2)  # 0 s after the last line: held
    bar.update(3)  # the end: said once
    bar.update(3)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"sweep s: {n}/3 runs done, 2 s elapsed" for n in (0, 1, 3)], lines


def test_a_run_written_over_another_leaves_none_of_its_files(main, tmp_path):
    out = tmp_path / "run"
    traced = ["--set", "workload.requests=2", "--set", "trace.link_ms=1", "--quiet"]
    assert main("run", "thesis", *traced, "--out", str(out)).returncode == 0
    assert (out / "link_trace.csv").exists()
    assert main("run", "thesis", "--set", "workload.requests=2", "--quiet", "--out", str(out)).returncode == 0
    files = ("summary.json", "requests.csv", "links.csv", "scenario.json", "process.txt")
    assert sorted(p.name for p in out.iterdir()) == sorted(files), "the first run's trace is gone"


def test_plot_says_the_file_it_wrote(main, tmp_path):
    run_dir = tmp_path / "run"
    assert main("run", "thesis", "--quiet", "--set", "workload.requests=2", "--out", str(run_dir)).returncode == 0
    done = main("plot", str(run_dir), "--out", str(tmp_path / "figure"))
    assert done.returncode == 0, done.stderr
    # matplotlib writes PNG when the name has no suffix, and adds it: the message names that file
    assert f"wrote {tmp_path / 'figure.png'}" in " ".join(done.stdout.split())
    assert (tmp_path / "figure.png").read_bytes()[:4] == b"\x89PNG" and not (tmp_path / "figure").exists()


def test_numbers_of_options_are_checked_by_argparse(main):
    for args, says in [
        (["run", "thesis", "--pcap", "x", "--pcap-start", "nan"], "argument --pcap-start: must be a finite number"),
        (["run", "thesis", "--pcap", "x", "--pcap-stop", "inf"], "argument --pcap-stop: must be a finite number"),
        (["runs", "list", "--limit", "-1"], "argument --limit: must be a whole number, 0 or more; got '-1'"),
        (["report", "x", "--out", "x.html", "--detail", "-1"], "argument --detail: must be a whole number"),
        (["run", "thesis", "--pcap-payload"], "--pcap-payload: a capture option needs --pcap DIR"),
        (["run", "thesis", "--pcap-start", "1"], "--pcap-start: a capture option needs --pcap DIR"),
        (["run", "thesis", "--pcap-start", "0"], "--pcap-start: a capture option needs --pcap DIR"),
    ]:
        done = main(*args)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_damaged_run_directories_are_named_in_one_line_by_plot_and_report(main, tmp_path):
    import shutil

    good = tmp_path / "good"
    assert main("run", "thesis", "--quiet", "--set", "workload.requests=3", "--out", str(good)).returncode == 0
    damages = {
        "json": ("summary.json", "{not json", "summary.json: Expecting property name"),
        "list": ("summary.json", "[1, 2]", "summary.json holds no JSON object"),
        "csv": ("requests.csv", 'a,b\n1,2,3,4\n"unterminated', "requests.csv: Error tokenizing data"),
        "binary": ("requests.csv", b"\xff\xfe\x00garbage", "requests.csv: 'utf-8' codec can't decode"),
        "empty": ("requests.csv", "", "requests.csv is empty"),
        "gone": ("links.csv", None, "no links.csv"),
    }
    for name, (file, content, says) in damages.items():
        bad = tmp_path / name
        shutil.copytree(good, bad)
        if content is None:
            (bad / file).unlink()
        elif isinstance(content, bytes):
            (bad / file).write_bytes(content)
        else:
            (bad / file).write_text(content)
        for args in (
            ["plot", str(bad), "--out", str(tmp_path / "p.png")],
            ["report", str(bad), "--out", str(tmp_path / "r.html")],
        ):
            done = main(*args)
            assert done.returncode == 2, (name, args[0], done.stderr)
            assert done.stderr.startswith(f"error: {bad}: not a run directory ({says}"), done.stderr
            assert "bondsim run --out writes one" in done.stderr and done.stderr.count("\n") == 1


def test_a_quick_reproduction_says_so_in_its_summary(main, tmp_path):
    done = main("reproduce", "hetero-bonding", "--quick", "--quiet", "--workers", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Quick size (`--quick`)" in (tmp_path / "summary.md").read_text()


def test_an_empty_path_is_refused_and_schedulers_takes_a_mode_with_brackets(main):
    for args in (
        ["run", "thesis", "--out", ""],
        ["run", "thesis", "--pcap", " "],
        ["reproduce", "thesis", "--out", ""],
    ):
        done = main(*args)
        assert done.returncode == 2 and "an empty path; give a file or directory name" in done.stderr, done.stderr
    done = main("schedulers", "balance-rr[packets_per_slave=2]", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["name"] == "balance-rr"


def test_measuring_from_past_the_runs_end_is_said_not_silent(cli):
    late = cli("run", "thesis", "--set", "workload.requests=2", "--set", "measure_from_s=1e6", "--json")
    assert late.returncode == 0 and json.loads(late.stdout)["goodput_bps"] == 0
    assert late.stderr.startswith("warning: measure_from_s (1e+06 s) is not before the run's end (")
    early = cli("run", "thesis", "--set", "workload.requests=2", "--set", "measure_from_s=0.001", "--json")
    assert early.returncode == 0 and early.stderr == "" and json.loads(early.stdout)["goodput_bps"] > 0


def test_the_summary_table_says_what_packets_and_delivered_count(cli):
    # An upload's bond carries the server's ACKs, its delivered count the data the server read.
    proc = cli("run", "tcp_rr", "--set", "workload.requests=2", "--set", "workload.direction=upload")
    assert proc.returncode == 0, proc.stderr
    assert "packets through the bond" in proc.stdout and "data packets delivered" in proc.stdout


def test_a_scenario_names_its_kernel_era_and_its_own_fields_win(tmp_path):
    # sender.kernel is the schema's word (--kernel's spelling): the preset fills what the file
    # leaves unset, and a field the file sets wins.
    from bondsim import kernels
    from bondsim.scenario import load

    scenario = tmp_path / "era.toml"
    scenario.write_text(
        'name = "era"\n[workload]\nrequests = 1\nfile_size = { kind = "fixed", bytes = 100000 }\n'
        '[sender]\nkind = "tcp"\nkernel = "linux-3.x"\nundo = "linux-3.15"\n'
        '[bond]\nmode = "balance-rr"\n[[links]]\nrate_mbps = 100\n'
    )
    sender = load(scenario)["sender"]
    assert (sender["kernel"], sender["undo"], sender["tcp_fack"], sender["tcp_recovery"]) == (
        "linux-3.x",
        "linux-3.15",
        True,
        0,
    )
    by_cli = load("tcp_rr", kernel="linux-3.x")["sender"]
    assert by_cli["kernel"] == "linux-3.x"
    assert load("tcp_rr", kernel="current") == load("tcp_rr", kernel="modern") == load("tcp_rr")
    every = {f.partition("=")[0].removeprefix("sender.") for preset in kernels.TCP.values() for f in preset}
    assert kernels.fields() == sorted(every)
    assert list(kernels.REPRODUCED) == ["linux-3.x", "modern"], "the reproductions' rows: the seeds' era, today's"
