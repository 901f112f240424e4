"""Every way a scenario can be wrong ends in one clear error naming the field."""

from __future__ import annotations

import pytest

import bondsim
from bondsim import ScenarioError
from bondsim.scenario import apply_overrides, load, parse_value


def error_of(*overrides: str, source="thesis") -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load(source, overrides)
    return info.value


@pytest.mark.parametrize(
    ("override", "path", "says"),
    [
        (
            "links.1.perod_ms=40",
            "links.1.perod_ms",
            "unknown field `perod_ms` (did you mean `period_ms`?), expected one of",
        ),
        ("workload.reqests=5", "workload.reqests", "unknown field `reqests`"),
        ("colour=1", "colour", "unknown field `colour`"),
        ("links.1.period_ms=fast", "links.1.period_ms", 'must be a number, got "fast"'),
        ("links.1.jitter={kind='uniform', max_us=0}", "links.1.jitter.max_us", "must be a duration > 0"),
        ("links.1.jitter={kind='choice', values_us=[]}", "links.1.jitter.values_us", "at least one delay"),
        ("links.1.jitter={kind='choice', values_us=[0, -1]}", "links.1.jitter.values_us.1", "must be"),
        (
            "links.1.jitter={kind='gauss', sd_us=5}",
            "links.1.jitter.kind",
            'must be one of `uniform`, `exponential`, `normal`, `choice`, got "gauss"',
        ),
        ("workload.requests=-3", "workload.requests", "must be a whole number from 0 to 4294967295, got -3"),
        ("workload.requests=0", "workload.requests", "must be >= 1, got 0"),
        ("links.1.period_ms=0", "links.1.period_ms", "must be a duration > 0"),
        ("links.0.slowdown=-2", "links.0.slowdown", "must be a factor > 0"),
        ("sender.tick_ms=-20", "sender.tick_ms", "must be a duration > 0"),
        ("sender.chunk_bytes=0", "sender.chunk_bytes", "must be >= 1"),
        ("bond.mode=fastest", "bond.mode", "unknown scheduler `fastest`; registered: balance-rr"),
        ("bond.packets_per_slave=2", "bond.packets_per_slave", None),  # valid: checked below
        (
            "bond.gapp_us=5",
            "bond.gapp_us",
            "`gapp_us` is not a field of the bond nor a parameter of any mode (those of balance-rr: packets_per_slave)"
            "; did you mean `gap_us`?",
        ),
        ("bond.miimom=5", "bond.miimom", "did you mean `miimon`?"),
        ("bond.packets_per_slave=70000", "bond.packets_per_slave", "must be an integer from 0 to 65535"),
        (
            'workload.file_size={kind = "zipf"}',
            "workload.file_size.kind",
            'must be one of `fixed`, `uniform`, `zipfset`, `list`, got "zipf"; did you mean `zipfset`?',
        ),
        ('workload.file_size={kind = "fixed"}', "workload.file_size", "missing field `bytes`"),
        (
            'workload.file_size={kind = "zipfset", classes = [1, 7]}',
            "workload.file_size.classes.1",
            "classes are 0, 1, 2 and 3",
        ),
        ('workload.arrivals={kind = "batches", size = 0, every_s = 5.0}', "workload.arrivals.size", "must be >= 1"),
        ('workload.arrivals={kind = "closed", active = 0}', "workload.arrivals.active", "must be >= 1"),
        ('workload.arrivals={kind = "closed"}', "workload.arrivals", "missing field `active`"),
        ("measure_from_s=-1", "measure_from_s", "must be a duration >= 0"),
        ("links=[]", "links", "a bond needs at least one link"),
        # durations that round to 0 ns would stop simulated time: the run would spin for ever
        ("links.1.period_ms=1e-7", "links.1.period_ms", "must be at least 1 ns"),
        ("links.1.period_ms=1e-300", "links.1.period_ms", "got 1e-300 ms, which rounds to 0 ns"),
        ("sender.tick_ms=1e-9", "sender.tick_ms", "must be at least 1 ns"),
        ("links.1.slowdown=1e-9", "links.1.slowdown", "would take 0 ns"),
        ("bond.miimon=1e-7", "bond.miimon", "must be 0 or at least 1 ns"),
        ("max_events=0", "max_events", "must be >= 1"),
        # JSON has no NaN or infinity: the front says so, naming the field
        ("links.1.period_ms=nan", "links.1.period_ms", "must be a finite number, got NaN"),
        ("sender.tick_ms=inf", "sender.tick_ms", "must be a finite number, got infinity"),
        ("links.0.slowdown=-inf", "links.0.slowdown", "must be a finite number, got -infinity"),
        ("links.0.slow_windows=[{start_s = 0.0, end_s = nan, slowdown = 2.0}]", "links.0.slow_windows.0.end_s", "NaN"),
        (
            "links.0.slow_windows=[{start_s = 3.0, end_s = 1.0, slowdown = 2.0}]",
            "links.0.slow_windows.0.end_s",
            "must be > start_s",
        ),
        # a name is a link's identity in every output and in bond.primary
        ("links.1.name=link0", "links.1.name", "gives link 1 the name `link0`, which link 0 has"),
        # refused at once, before anything is done per link
        ("links.0.count=1000000000", "links", "at most 4096 links in a bond, got 1000000003"),
        # TOML dates and times have no JSON form: named like NaN, not a traceback
        ("seed=1979-05-27", "seed", "is a TOML date or time (1979-05-27)"),
        ("name=07:32:00", "name", "is a TOML date or time (07:32:00)"),
        ("links.0.slow_windows=[{start_s = 1979-05-27T07:32:00Z}]", "links.0.slow_windows.0.start_s", "TOML date"),
        # serde's words put in the file's: a table, a quoted name, a whole number too large
        ("trace=5", "trace", "must be a table of fields, got 5"),
        ("bond=[]", "bond", "must be a table of fields, got a list"),
        # serde's derive reads a struct from a list of its fields in order: not a scenario's meaning
        ("trace=[5, 2, 100]", "trace", "must be a table of fields, got a list"),
        ('switch=["none"]', "switch", "must be a table of fields, got a list"),
        ("network=[]", "network", "must be a table of fields, got a list"),
        ("ipfrag=[]", "ipfrag", "must be a table of fields, got a list"),
        ('trace={link_ms = "often"}', "trace.link_ms", 'must be a number, got "often"'),
        ("bond.miimon=fast", "bond.miimon", 'must be a number, got "fast"'),
        ("bond.mode=1", "bond.mode", "must be text, in quotes, got 1"),
        ("seed=18446744073709551616", "seed", "(a whole number beyond 64 bits reads as a float)"),
        ("bond.hz=18446744073709551616", "bond.hz", "must be a whole number from 0 to 4294967295"),
        ("workload.requests=1e3", "workload.requests", "got 1000.0 (write it without a decimal point or exponent)"),
        ('bond.mode="1"', "bond.mode", None),  # balance-rr's number, quoted
        ("links.0.failures.0.down_s=1", "links.0.failures", "give the list whole, in [ ]"),
        ('workload.arrivals={kind = "at_start", bogus = 5}', "workload.arrivals", "unknown field `bogus`"),
        # flapping trains are queued at the start: bounded in count and in length
        (
            "links.0.flapping={start_s = 0.1, down_ms = 1, up_ms = 1, count = 4294967295}",
            "links.0.flapping.count",
            "must be at most 1000000",
        ),
        # the trace's own floor (1 µs) is named, not the clock's
        ("trace.link_ms=1e-9", "trace.link_ms", "must be at least 0.001 (1 µs), got 1e-9"),
    ],
)
def test_bad_field_is_named_with_what_is_allowed(override, path, says):
    if says is None:
        load("thesis", [override])
        return
    err = error_of(override)
    assert err.path == path
    assert str(err).startswith(f"{path}: ")
    assert says in str(err)
    assert "\n" not in str(err)


@pytest.mark.parametrize(
    ("override", "path", "says"),
    [
        # TCP's packet size is its MSS: the error names the field the user sets
        ("sender.mss=0", "sender.mss", "must be >= 1"),
        ("sender.mss=2000", "sender.mss", "header bytes exceed links.0.mtu"),
        ("sender.mss=100000", "sender.mss", "must be from 1 to 65535 bytes (an IPv4 packet's Total Length"),
        # Linux's sysctl takes 0 to 4 (net/ipv4/sysctl_net_ipv4.c)
        ("sender.tcp_early_retrans=5", "sender.tcp_early_retrans", "Linux takes 0 to 4"),
        ("sender.tcp_early_retrans=4", "sender.tcp_early_retrans", None),
        ("network.protocol=udp", "network.protocol", "a tcp sender's segments are TCP"),
        # the tail loss probe's rule is one of two names
        ("sender.tlp_timeout=3", "sender.tlp_timeout", "must be text, in quotes, got 3"),
        ("sender.tlp_timeout={}", "sender.tlp_timeout", "must be text, in quotes, got a table"),
        ('sender.tlp_timeout="linux-4"', "sender.tlp_timeout", 'must be one of `current`, `linux-3.10`, got "linux-4"'),
        ("sender.trace_ms=1e-9", "sender.trace_ms", "must be at least 0.001 (1 µs)"),
        # Linux's sysctls: tcp_recovery a bitmap of 0x1, 0x2, 0x4; tcp_frto 0 to 2
        ("sender.tcp_recovery=8", "sender.tcp_recovery", "0 to 7, got 8"),
        ("sender.tcp_frto=5", "sender.tcp_frto", "Linux takes 0 (off), 1 or 2"),
        # FACK, early retransmit and NCR are modelled before RACK only (Linux 3.x)
        ("sender.tcp_fack=true", "sender.tcp_fack", "set tcp_recovery = 0 with it"),
        ("sender.early_retransmit=true", "sender.early_retransmit", "early retransmit is modelled without RACK"),
        ("sender.ncr=true", "sender.ncr", "NCR is modelled without RACK only"),
        ("sender.forward_retransmit=true", "sender.forward_retransmit", "forward retransmission is modelled"),
        ('sender.undo="linux-3.13"', "sender.undo", "a 3.x undo rule is modelled without RACK"),
        (
            'sender.small_queues="3.12"',
            "sender.small_queues",
            'must be one of `current`, `linux-3.12`, `linux-3.5`, got "3.12"',
        ),
        (
            'sender.cwnd_reduction="halving"',
            "sender.cwnd_reduction",
            'must be one of `prr`, `rate-halving`, got "halving"',
        ),
        ("sender.cwnd_reduction='rate-halving'", "sender.cwnd_reduction", "rate halving is modelled without RACK only"),
        (
            'sender.undo="linux-3.16"',
            "sender.undo",
            'must be one of `current`, `linux-3.13`, `linux-3.15`, got "linux-3.16"; did you mean `linux-3.13`?',
        ),
    ],
)
def test_bad_tcp_field_is_named_as_the_user_set_it(override, path, says):
    if says is None:
        load("tcp_rr", [override])
        return
    err = error_of(override, source="tcp_rr")
    assert err.path == path and says in str(err), str(err)


def test_a_teamd_link_watch_under_a_driver_mode_is_named_before_the_drivers_delays():
    """failover_udp sets downdelay = 200: under balance-rr the link watch is what is out of place; under a
    teamd mode the driver's downdelay is."""
    watch = 'bond.link_watch={name = "ethtool"}'
    err = error_of("bond.mode=balance-rr", watch, source="failover_udp")
    assert err.path == "bond.link_watch" and "it needs a teamd mode" in str(err), str(err)
    err = error_of("bond.mode=teamd:roundrobin", watch, source="failover_udp")
    assert err.path == "bond.downdelay" and "use its own delays" in str(err), str(err)


def test_nesting_deeper_than_any_field_is_one_error_not_a_recursion_traceback(tmp_path):
    deep = "[" * 600 + "]" * 600
    assert "nest more than" in str(error_of(f"seed={deep}"))
    assert "nest more than" in str(error_of(".".join(["workload"] + ["x"] * 600) + "=1"))
    dotted = tmp_path / "dotted.toml"
    dotted.write_text(load_text() + "\n" + ".".join(["a"] * 500) + ".b = 1\n")
    assert "nest more than" in str(error_of(source=dotted))


def test_bad_override_syntax():
    assert "path=value" in str(error_of("bond.mode"))
    # a byte that is not UTF-8, as Python's argv keeps it (a lone surrogate)
    assert str(error_of("name=a\udcffb")) == "name: --set takes UTF-8 text"
    assert error_of("links.9.period_ms=1").path == "links.9"
    assert error_of("seed.x=1").path == "seed"


def test_missing_and_malformed_files(tmp_path):
    nope = tmp_path / "nope.toml"
    assert f"{nope}: not a file, and not a shipped scenario (" in str(error_of(source=nope))
    bad = tmp_path / "bad.toml"
    bad.write_text("[workload\nrequests = 3")
    assert "is not valid TOML" in str(error_of(source=bad))
    trace = tmp_path / "t.toml"
    trace.write_text(load_text().replace("period_ms = 82  # the slow interface", 'trace_file = "missing.txt"'))
    err = error_of(source=trace)
    assert err.path == "links.1.trace_file" and "cannot read trace file" in str(err)
    (tmp_path / "bad.txt").write_text("0.1\nsoon\n")
    trace.write_text(load_text().replace("period_ms = 82  # the slow interface", 'trace_file = "bad.txt"'))
    assert "bad.txt:2: expected seconds as a number, got `soon`" in str(error_of(source=trace))
    # A number the schema refuses is named after the file the user wrote, not the field it becomes.
    for text, says in [("0.1\n# a comment\n-1\n", "must be a duration > 0"), ("0.1\nnan\n", "must be a finite number")]:
        (tmp_path / "bad.txt").write_text(text)
        err = error_of(source=trace)
        assert err.path == "links.1.trace_file" and str(err).startswith(
            f"links.1.trace_file: bad.txt, interval 2: {says}"
        )


@pytest.mark.parametrize(
    "name",
    ["../pyproject", "../../../pyproject", "thesis.toml", "nosuch", "scenarios/../thesis", "../thesis", "a/thesis"],
)
def test_a_shipped_scenario_is_a_plain_name_and_a_wrong_one_lists_them(tmp_path, monkeypatch, name):
    from bondsim.scenario import find, shipped_dir, shipped_names

    monkeypatch.chdir(tmp_path)  # where none of these is a file
    assert find("thesis") == shipped_dir() / "thesis.toml" and load("thesis")["name"] == "thesis"
    assert (
        "thesis" in shipped_names()
        and "thesis_load" not in shipped_names()
        and "thesis_load.sweep" not in shipped_names()
    )
    err = error_of(source=name)
    # never resolved against the shipped folder (`../../../pyproject` would read the project's pyproject.toml)
    assert str(err) == f"{name}: not a file, and not a shipped scenario ({', '.join(shipped_names())})"


def test_files_that_are_not_regular_or_too_large_are_refused_before_reading(tmp_path, monkeypatch):
    import os

    from bondsim import scenario

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    # A FIFO would block the read for ever, a device never end: refused by kind, at once
    for path in (fifo, "/dev/zero", tmp_path):
        err = error_of(source=path)
        assert "is not a regular file" in str(err) or "is a directory" in str(err), str(err)
    big = tmp_path / "big.toml"
    big.write_text(load_text())
    monkeypatch.setattr(scenario, "MAX_FILE_BYTES", 100)
    assert f"is {big.stat().st_size:,} bytes, more than the 100 bondsim reads" in str(error_of(source=big))


def test_a_leading_byte_order_mark_is_read_as_utf8(tmp_path):
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + load_text().encode())
    assert load(bom) == load("thesis")
    dated = tmp_path / "dated.toml"
    dated.write_text(load_text().replace("seed = 1", "seed = 1979-05-27"))
    assert error_of(source=dated).path == "seed"


def load_text() -> str:
    return bondsim.scenario.shipped("thesis").read_text()


def test_values_parse_as_toml_else_text():
    assert parse_value("3") == 3
    assert parse_value("2.5") == 2.5
    assert parse_value("true") is True
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_value("lb") == "lb"
    assert parse_value("balance-rr[packets_per_slave=2]") == "balance-rr[packets_per_slave=2]"


def test_overrides_create_missing_tables_and_do_not_touch_the_original():
    doc = {"bond": {"mode": "rr"}}
    out = apply_overrides(doc, ["sender.tick_ms=10", "bond.mode=lb"])
    assert out == {"bond": {"mode": "lb"}, "sender": {"tick_ms": 10}}
    assert doc == {"bond": {"mode": "rr"}}


def test_a_list_item_is_reached_by_index_dotted_or_bracketed_as_errors_name_it():
    doc = {"links": [{"period_ms": 20}, {"period_ms": 20}]}
    dotted = apply_overrides(doc, ["links.1.period_ms=40"])
    assert (
        apply_overrides(doc, ["links[1].period_ms=40"]) == dotted == {"links": [{"period_ms": 20}, {"period_ms": 40}]}
    )
    with pytest.raises(ScenarioError, match=r"links\.2: list index must be 0 to 1, got `2`"):
        apply_overrides(doc, ["links[2].period_ms=40"])


def test_a_link_an_entry_makes_with_count_is_set_alone_by_its_name():
    """``links.N`` is the N-th ``[[links]]`` entry; one of the links an entry makes with ``count`` is
    ``links.NAME``: its entry is split around it, every link keeping its id and name (so its results)."""
    plain = load("tcp_rr")  # [[links]] count = 3, then one more: link0..link3
    assert [e["count"] for e in plain["links"]] == [3, 1]
    failing = load("tcp_rr", ["links.link1.failures=[{down_s = 0.01, up_s = 0.02}]"])
    assert [(e["count"], e.get("name")) for e in failing["links"]] == [(1, None), (1, None), (1, None), (1, None)]
    assert [bool(e["failures"]) for e in failing["links"]] == [False, True, False, False]
    named = load("tcp_rr", ['links.0.name="eth"', "links.eth2.delay_us=5"])
    assert [(e["count"], e.get("name"), e["delay_us"]) for e in named["links"]] == [
        (2, "eth", 20.0),
        (1, "eth2", 5.0),
        (1, None, 120.0),
    ]
    # the split changes nothing but the link set: every link's name, and every figure, as before
    a = bondsim.run("tcp_rr", ["workload.file_size.bytes=200000"])
    b = bondsim.run("tcp_rr", ["workload.file_size.bytes=200000", "links.link1.delay_us=20"])
    assert list(a.links["name"]) == list(b.links["name"]) == ["link0", "link1", "link2", "link3"]
    assert a.summary["goodput_bps"] == b.summary["goodput_bps"]
    assert a.summary["packets"] == b.summary["packets"]


@pytest.mark.parametrize(
    ("override", "says"),
    [
        # an index beyond the entries but not beyond the links: the rule, and the name meant
        (
            "links.2.delay_us=5",
            "links.2: list index must be 0 to 1, got `2`: links.N is the N-th [[links]] entry, and these 2 make 4 "
            "links (count); one link is links.NAME, did you mean links.link2?",
        ),
        (
            "links.lnk2.delay_us=5",
            "links.lnk2: no link is called `lnk2` (links: link0, link1, link2, link3); links.NAME is one link by its "
            "name, links.N the N-th [[links]] entry (0 to 1); did you mean links.link2?",
        ),
        ("links.9.delay_us=5", "links.9: list index must be 0 to 1, got `9`"),
    ],
)
def test_a_links_index_or_name_that_is_none_says_the_rule(override, says):
    err = error_of(override, source="tcp_rr")
    assert str(err) == says
    assert err.path == override.split("=")[0].rsplit(".", 1)[0]


def test_directory_of_files_becomes_their_sizes(tmp_path):
    files = tmp_path / "files"
    (files / "sub").mkdir(parents=True)
    (files / "a").write_bytes(b"x" * 3000)
    (files / "sub" / "b").write_bytes(b"x" * 10)
    doc = load("thesis", [f'workload.file_size={{kind = "dir", path = "{files}"}}'])
    assert doc["workload"]["file_size"] == {"kind": "list", "bytes": [3000, 10]}
    result = bondsim.run(doc)
    assert set(result.requests["file_bytes"]) == {3000, 10}
    assert (
        error_of(f'workload.file_size={{kind = "dir", path = "{tmp_path / "none"}"}}').path == "workload.file_size.path"
    )


def test_checked_scenario_has_every_default():
    doc = load("thesis")
    assert doc["sender"] == {"kind": "paced", "tick_ms": 20.0, "packets_per_tick": 4, "chunk_bytes": 1024}
    assert doc["links"][1]["period_ms"] == 82.0
    assert doc["links"][0]["slowdown"] == 1.0


def test_the_python_api_takes_numpy_numbers_and_names_what_it_cannot_take():
    import numpy as np

    doc = {"workload": {"requests": np.int64(2), "file_size": {"kind": "fixed", "bytes": np.int32(3000)}}}
    doc |= {"links": [{"period_ms": np.float64(20.0)}, {"period_ms": 82}], "bond": {"mode": "rr"}}
    plain_doc = {"workload": {"requests": 2, "file_size": {"kind": "fixed", "bytes": 3000}}}
    plain_doc |= {"links": [{"period_ms": 20.0}, {"period_ms": 82}], "bond": {"mode": "rr"}}
    assert bondsim.run(doc).summary["packets"] == bondsim.run(plain_doc).summary["packets"] == 2 * 3
    swept = bondsim.sweep(
        {"base": "thesis", "axes": {"workload.requests": np.arange(1, 3)}, "seeds": np.array([1, 2])},
        progress=False,
        workers=1,
    )
    assert sorted(zip(swept["workload.requests"], swept["seed"], strict=True)) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    for source, overrides, says in [
        (None, [], "a scenario is a TOML file, a shipped name like `thesis`, or a dict; got None"),
        (42, [], "got 42"),
        ("thesis", "bond.mode=lb", "overrides are a list of 'path=value' strings"),
        ("thesis", None, "overrides are a list of 'path=value' strings"),
        ("thesis", [("bond.mode", "lb")], "an override is a 'path=value' string"),
    ]:
        with pytest.raises(ScenarioError) as info:
            bondsim.run(source, overrides)
        assert says in str(info.value)


@pytest.mark.parametrize(
    ("sets", "warned"),
    [
        (["bond.mode=balance-xor"], True),  # tcp_rr: 8 requests, 8 clients
        (["bond.mode=802.3ad"], True),
        (["bond.mode=teamd:loadbalance"], True),
        (["bond.mode=balance-rr"], False),  # it places packets, not flows by a hash
        (["bond.mode=balance-xor", "workload.clients_in_turn=true"], False),
        (["bond.mode=balance-xor", "workload.requests=20"], False),  # more requests than clients: meant to share
        # a hash that reads the ports sets one client's connections apart: no harm in sharing a client
        (["bond.mode=balance-xor", "bond.xmit_hash_policy=layer3+4"], False),
        (["bond.mode=802.3ad", "bond.xmit_hash_policy=encap3+4"], False),
        (["bond.mode=balance-xor", "bond.xmit_hash_policy=layer2+3"], True),
        (["bond.mode=teamd:loadbalance[tx_hash=eth+ipv4+l4]"], False),
        (["bond.mode=ovs:balance-tcp"], False),
        (["bond.mode=ovs:balance-slb"], True),
    ],
)
def test_clients_drawn_at_random_are_said_where_a_hash_places_their_flows(main, sets, warned):
    # issue 37, item 9: "8 requests from 8 clients" came from about 5 distinct clients without a word
    r = main("scenario", "check", "tcp_rr", "--quiet", *(a for s in sets for a in ("--set", s)))
    assert r.returncode == 0, r.stderr
    line = "warning: workload.clients_in_turn: false: the 8 requests draw their clients at random from 8, about 5.3"
    assert (line in r.stderr) is warned, r.stderr


def test_clients_that_seldom_repeat_are_not_said(main):
    # the thesis: 100 requests from 5,000 clients, about 99.0 distinct
    r = main("scenario", "check", "thesis", "--quiet", "--set", "bond.mode=balance-xor")
    assert r.returncode == 0 and "clients_in_turn" not in r.stderr, r.stderr
