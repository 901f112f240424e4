"""Property: whatever scenario a user writes, ``bondsim scenario check`` and ``bondsim run`` either
succeed or stop with one line ``error: ...`` and exit code 2 — never a traceback, a crash or a hang.

Scenarios are generated as a user makes them: a shipped scenario and ``--set PATH=VALUE`` overrides,
values written in TOML (numbers of every size, NaN, infinity, text, booleans, lists, tables) or as
plain text. Runs are bounded by the scenario's own guard, ``max_events``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bondsim.cli import main

BASES = ("thesis", "hetero", "league", "failover_udp", "failover", "lacp_flows", "xor_clients", "tcp_rr")

PATHS = (
    "seed",
    "stop_s",
    "name",
    "workload",
    "workload.requests",
    "workload.clients",
    "workload.clients_in_turn",
    "workload.arrivals",
    "workload.file_size",
    "workload.file_size.bytes",
    "workload.requests.deep",
    "sender",
    "sender.kind",
    "sender.tick_ms",
    "sender.packets_per_tick",
    "sender.chunk_bytes",
    "sender.window_pkts",
    "sender.ack_delay_us",
    "sender.message_bytes",
    "sender.rate_mbps",
    "sender.initial_cwnd",
    "sender.rto_min_ms",
    "network.protocol",
    "network.vlan",
    "network.header_bytes",
    "network.client_ips",
    "bond",
    "bond.mode",
    "bond.miimon",
    "bond.updelay",
    "bond.downdelay",
    "bond.packets_per_slave",
    "bond.xmit_hash_policy",
    "links",
    "links.0",
    "links.0.count",
    "links.0.kind",
    "links.0.period_ms",
    "links.1.period_ms",
    "links.0.rate_mbps",
    "links.0.slowdown",
    "links.0.delay_us",
    "links.0.per_packet_us",
    "links.0.mtu",
    "links.0.overhead_bytes",
    "links.0.txqueuelen",
    "links.0.loss",
    "links.0.loss_model",
    "links.0.jitter",
    "links.0.failures",
    "links.0.slow_windows",
    "links.0.intermittent",
    "links.0.random_failures",
    "links.0.trace_intervals_s",
    "links.7.period_ms",
    "nosuch",
)

KEYS = ("kind", "bytes", "rate_per_s", "size", "every_s", "max_us", "down_s", "up_s", "start_s", "end_s", "slowdown")
KINDS = ("fixed", "uniform", "poisson", "batches", "at_start", "rate", "paced", "window", "cbr", "tcp", "zipfset")

NUMBERS = st.one_of(
    st.integers(min_value=-3, max_value=5000),
    st.sampled_from([0, 1, 2**31, 2**32, 2**63, 2**64, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1e-300, 1e-12, 1e-9, 1e-7, 1e-6, 0.001, 0.5, 1.0, 20.0, 82.0, 1e7, 1e300, -0.0, -1.0]),
)
SCALARS = st.one_of(NUMBERS, st.booleans(), st.sampled_from(KINDS), st.text(max_size=8))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=8,
)


def toml(value) -> str:
    """``value`` as a TOML value, as a user would write it after ``--set PATH=``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"


#: Numbers a user might mean (small, fractional, at the edges), more often than any number at all.
PLAUSIBLE = st.one_of(
    st.integers(min_value=0, max_value=200),
    st.floats(min_value=0, max_value=200),
    st.sampled_from([1e-9, 1e-6, 1e-3, 0.1, 0.5, 1.0, 1000.0, 1e5, 1e7, 3.2e10, -1.0, 0]),
    NUMBERS,
)
MODES = st.sampled_from(
    [
        "rr",
        "balance-rr",
        "active-backup",
        "balance-xor",
        "broadcast",
        "802.3ad",
        "balance-tlb",
        "balance-alb",
        "teamd:random",
        "teamd:loadbalance",
        "ovs:balance-slb",
        "ovs:balance-tcp",
        "lb",
        "n-to-1",
        "least-queue",
        "earliest-finish",
        "flowlet",
        "power-of-two",
        "drr-stripe",
        "flowlet[gap_us=0]",
        "balance-tlb[rebalance_interval_s=0.1]",
        "nosuch",
    ]
)


def table(**fields) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional=fields)


LINK = table(count=PLAUSIBLE, period_ms=PLAUSIBLE, rate_mbps=PLAUSIBLE, delay_us=PLAUSIBLE, loss=PLAUSIBLE)

#: Tables of the right shape with plausible (or wild) values: the schema's checks, more than its types.
STRUCTURED = st.one_of(
    st.tuples(st.just("bond.mode"), MODES.map(toml)),
    st.tuples(
        st.sampled_from(["links.0.period_ms", "links.1.period_ms", "sender.tick_ms", "links.0.slowdown", "stop_s"]),
        PLAUSIBLE.map(toml),
    ),
    st.tuples(
        st.just("workload.arrivals"),
        st.one_of(
            table(kind=st.just("poisson"), rate_per_s=PLAUSIBLE),
            table(kind=st.just("batches"), size=PLAUSIBLE, every_s=PLAUSIBLE),
        ).map(toml),
    ),
    st.tuples(
        st.just("workload.file_size"),
        st.one_of(
            table(kind=st.just("fixed"), bytes=PLAUSIBLE),
            table(kind=st.just("uniform"), min_bytes=PLAUSIBLE, max_bytes=PLAUSIBLE),
            table(kind=st.just("zipfset"), classes=st.lists(PLAUSIBLE, max_size=3)),
            table(kind=st.just("list"), bytes=st.lists(PLAUSIBLE, max_size=3)),
        ).map(toml),
    ),
    st.tuples(
        st.just("sender"),
        st.one_of(
            table(kind=st.just("paced"), tick_ms=PLAUSIBLE, packets_per_tick=PLAUSIBLE, chunk_bytes=PLAUSIBLE),
            table(kind=st.just("window"), window_pkts=PLAUSIBLE, ack_delay_us=PLAUSIBLE, message_bytes=PLAUSIBLE),
            table(kind=st.just("cbr"), rate_mbps=PLAUSIBLE, chunk_bytes=PLAUSIBLE),
            table(kind=st.just("tcp"), initial_cwnd=PLAUSIBLE, rto_min_ms=PLAUSIBLE, mss=PLAUSIBLE),
        ).map(toml),
    ),
    st.tuples(st.just("links"), st.lists(LINK, min_size=1, max_size=3).map(toml)),
    st.tuples(st.just("links.0"), LINK.map(toml)),
    st.tuples(
        st.sampled_from(["links.0.jitter", "links.0.intermittent", "links.0.random_failures", "links.0.loss_model"]),
        st.one_of(
            table(kind=st.sampled_from(["uniform", "exponential", "normal"]), max_us=PLAUSIBLE, mean_us=PLAUSIBLE),
            table(slow_s=PLAUSIBLE, normal_s=PLAUSIBLE, slowdown=PLAUSIBLE, random=st.booleans()),
            table(mtbf_s=PLAUSIBLE, mttr_s=PLAUSIBLE),
            table(kind=st.just("gilbert_elliott"), p=PLAUSIBLE, r=PLAUSIBLE),
        ).map(toml),
    ),
    st.tuples(
        st.sampled_from(["links.0.failures", "links.0.slow_windows"]),
        st.lists(
            table(down_s=PLAUSIBLE, up_s=PLAUSIBLE, start_s=PLAUSIBLE, end_s=PLAUSIBLE, slowdown=PLAUSIBLE),
            max_size=3,
        ).map(toml),
    ),
)

OVERRIDE = st.one_of(
    STRUCTURED,
    STRUCTURED,
    st.tuples(st.sampled_from(PATHS), VALUES.map(toml)),
    st.tuples(st.sampled_from(PATHS), st.text(max_size=12)),  # plain text, as typed
    st.tuples(st.just("max_events"), st.one_of(st.integers(min_value=-1, max_value=10**6), NUMBERS).map(toml)),
)


def bondsim(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def assert_success_or_one_line_error(args: list[str]) -> int:
    code, _, err = bondsim(*args)
    assert code in (0, 2), (args, code, err)
    if code == 2:
        assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, (args, err)
        assert "Traceback" not in err
    return code


#: Examples drawn the same way every time (a failure in CI is a failure here), no deadline (runs vary).
FIXED = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(FIXED, max_examples=200)
@given(base=st.sampled_from(BASES), overrides=st.lists(OVERRIDE, max_size=4))
def test_any_scenario_is_run_or_refused_in_one_line(base, overrides):
    # small enough to run in a moment, unless an override says otherwise; the guard bounds the rest
    sets = ["workload.requests=3", "max_events=300000", *(f"{path}={text}" for path, text in overrides)]
    args = [a for item in sets for a in ("--set", item)]
    checked = assert_success_or_one_line_error(["scenario", "check", base, "--quiet", *args])
    ran = assert_success_or_one_line_error(["run", base, "--quiet", *args])
    if checked == 2:
        assert ran == 2, "a scenario that fails its check does not run"


def assert_run_invariants(result) -> None:
    """What every run keeps, from independent counts: every packet of the requests' files delivered, dropped
    or still under way (the requests table against the summary's counters; a run cut by ``stop_s`` also
    leaves some unsent); no link busier than the run is long; goodput within the links' capacity."""
    s, links = result.summary, result.links
    files = int(result.requests["packets"].sum())
    accounted = s["delivered"] + s["dropped"] + s["undelivered"]
    # a run cut by stop_s leaves packets never sent, in no count
    assert accounted == files if result.scenario.get("stop_s") is None else accounted <= files, (accounted, files)
    assert int(result.requests["received"].sum()) == s["delivered"]
    assert (links["busy_s"] <= s["duration_s"] * (1 + 1e-9)).all(), links[["busy_s"]].T
    assert (links["utilisation"] <= 1 + 1e-9).all(), links[["utilisation"]].T
    if (links["kind"] != "paced").all():
        # (A paced link sends its n packets at n ticks, n - 1 periods apart: over a run that ends as the
        # last one lands, the summary's throughput counts one packet more than the periods hold, e.g.
        # 1.0000112 for three links busy 276 s. The links' own utilisation counts ticks, and stays <= 1.)
        assert s["utilisation"] <= 1 + 1e-9
        assert s["goodput_bps"] <= s["capacity_bps"] * (1 + 1e-9)


@settings(FIXED, max_examples=120)
@given(base=st.sampled_from(BASES), overrides=st.lists(STRUCTURED, max_size=3))
def test_every_run_keeps_its_invariants(base, overrides):
    from hypothesis import assume

    from bondsim import BondsimError, ScenarioError
    from bondsim.api import run_checked
    from bondsim.scenario import check, load

    sets = ["workload.requests=3", "max_events=300000", *(f"{path}={text}" for path, text in overrides)]
    try:
        result = run_checked(check(load(base, sets)))
    except (ScenarioError, BondsimError):  # refused (the test above holds it to one line), or over its guard
        assume(False)
    assert_run_invariants(result)
