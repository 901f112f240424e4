"""The thesis model (Gupta 2010, ch. 5-6) behaves as the thesis and the model say.

Expected figures are derived from the model, not typed in: rr's out-of-order
share is the slow interface's share of rr's packets; rr's drain time is the
slow interface's packets times its period; lb's share follows a fluid model of
equal-length queues.
"""

from __future__ import annotations

import pytest
import simpy_model

import bondsim
from bondsim.reproduce import thesis
from bondsim.reproduce.thesis import lb_slow_share

SLOW_PERIOD_S = 0.082


def run(requests: int, mode: str, *extra: str) -> dict:
    return bondsim.run("thesis", [f"workload.requests={requests}", f"bond.mode={mode}", *extra]).summary


# Loads from 10 to 50 whose count is not a multiple of 4 (see the lockstep test for those).
SPREAD_LOADS = [10, 15, 25, 30, 35, 45, 50]


@pytest.mark.parametrize("requests", SPREAD_LOADS)
def test_rr_reorders_the_slow_interfaces_quarter(requests):
    s = run(requests, "rr")
    slow_share = s["links"][1]["packets_sent"] / s["packets"]
    assert slow_share == pytest.approx(0.25, abs=0.005)  # round-robin: every fourth packet
    # Packets on the slow interface arrive after later chunks: they are the out-of-order ones.
    assert s["ooo_fraction"] == pytest.approx(slow_share, abs=0.01)
    assert s["delivered"] == s["packets"] == requests * 101


@pytest.mark.parametrize("requests", SPREAD_LOADS)
def test_lb_reorders_well_under_half_of_rr(requests):
    rr, lb = run(requests, "rr"), run(requests, "lb")
    expected = lb_slow_share([20, 82, 20, 20])
    assert lb["ooo_fraction"] == pytest.approx(expected, abs=0.01)
    assert lb["ooo_fraction"] < 0.5 * rr["ooo_fraction"]
    assert lb["links"][1]["packets_sent"] / lb["packets"] == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize("requests", [10, 20, 30, 40, 50])
def test_rr_drains_about_twice_as_slowly_as_lb(requests):
    rr, lb = run(requests, "rr"), run(requests, "lb")
    # The slow interface is always backlogged under rr and sends its k-th packet at k x 82 ms.
    assert rr["makespan_s"] == pytest.approx(rr["links"][1]["packets_sent"] * SLOW_PERIOD_S, abs=1e-9)
    # lb can never beat the bond's capacity nor the sender's offered rate.
    capacity = 3 / 0.020 + 1 / SLOW_PERIOD_S
    assert lb["makespan_s"] >= max(lb["packets"] / capacity, lb["packets"] / (4 / 0.020))
    assert 2.0 <= rr["makespan_s"] / lb["makespan_s"] <= 2.6


@pytest.mark.parametrize("requests", [20, 40])
def test_rr_lockstep_pins_requests_when_load_is_a_multiple_of_four(requests):
    # next_req and next_iface advance together; with a multiple of 4 requests
    # each request keeps one interface until the queue shrinks.
    s = run(requests, "rr")
    assert s["ooo_fraction"] < 0.2
    assert s["ooo_fraction"] < run(requests + 1, "rr")["ooo_fraction"] - 0.05


def test_two_slow_interfaces_double_rr_reordering():
    sizes = '{kind = "zipfset", classes = [1, 2, 3], popularity = "uniform"}'
    extra = ("links.3.period_ms=82", f"workload.file_size={sizes}")
    rr, lb = run(200, "rr", *extra), run(200, "lb", *extra)
    assert rr["ooo_fraction"] == pytest.approx(0.5, abs=0.04)
    assert lb["ooo_fraction"] == pytest.approx(lb_slow_share([20, 82, 20, 82]), abs=0.03)


@pytest.mark.parametrize("mode", ["rr", "lb"])
@pytest.mark.parametrize(
    ("requests", "periods"), [(7, [20, 82, 20, 20]), (20, [20, 82, 20, 20]), (13, [20, 50, 30, 82])]
)
def test_independent_simpy_model_gives_identical_results(mode, requests, periods):
    ours = bondsim.run(
        "thesis",
        [f"workload.requests={requests}", f"bond.mode={mode}"]
        + [f"links.{i}.period_ms={p}" for i, p in enumerate(periods)],
    ).summary
    theirs = simpy_model.run(requests, 102400, periods, mode)
    assert ours["out_of_order"] == theirs["out_of_order"]
    assert ours["makespan_s"] == pytest.approx(theirs["makespan_s"], abs=1e-9)
    assert [link["packets_sent"] for link in ours["links"]] == theirs["packets_sent"]


def test_uniform_slowdown_equals_a_longer_period():
    slowed = run(30, "rr", "links.1.period_ms=20", "links.1.slowdown=4.1")
    assert slowed["out_of_order"] == run(30, "rr")["out_of_order"]
    assert slowed["makespan_s"] == pytest.approx(run(30, "rr")["makespan_s"])


def test_slow_window_delays_only_while_it_lasts():
    base = run(10, "rr", "links.1.period_ms=20")
    assert base["out_of_order"] == 0  # four equal interfaces: every packet keeps its place
    window = run(
        10, "rr", "links.1.period_ms=20", "links.1.slow_windows=[{start_s = 1.0, end_s = 3.0, slowdown = 5.0}]"
    )
    # 2 s at 100 ms instead of 20 ms: link 1 falls 16 sends behind, and what it holds then arrives late.
    assert window["out_of_order"] > 16
    assert window["makespan_s"] > base["makespan_s"] + 1.0
    late = run(
        10, "rr", "links.1.period_ms=20", "links.1.slow_windows=[{start_s = 100.0, end_s = 200.0, slowdown = 5.0}]"
    )
    assert late == {**base, "wall_s": late["wall_s"]}


def test_intermittent_slowdowns_reorder_more_the_longer_they_last():
    one = run(50, "rr", "links.1.period_ms=20", "links.1.intermittent={slow_s = 0.5, normal_s = 4.5, slowdown = 4.0}")
    more = run(50, "rr", "links.1.period_ms=20", "links.1.intermittent={slow_s = 2.5, normal_s = 2.5, slowdown = 4.0}")
    assert 0 < one["out_of_order"] < more["out_of_order"]
    random = "links.1.intermittent={slow_s = 2.5, normal_s = 2.5, slowdown = 4.0, random = true}"
    rnd = run(50, "rr", "links.1.period_ms=20", random)
    assert rnd["out_of_order"] > 0
    assert rnd["out_of_order"] != more["out_of_order"]
    assert run(50, "rr", "links.1.period_ms=20", random, "seed=2")["out_of_order"] != rnd["out_of_order"]


def test_trace_file_sets_link_timing(tmp_path):
    trace = tmp_path / "if1.txt"
    trace.write_text("# seconds between sends\n0.082\n")
    toml = tmp_path / "s.toml"
    text = (
        (bondsim.scenario.shipped("thesis"))
        .read_text()
        .replace("period_ms = 82  # the slow interface", 'trace_file = "if1.txt"')
    )
    toml.write_text(text)
    traced = bondsim.run(toml, ["workload.requests=30"]).summary
    assert traced["out_of_order"] == run(30, "rr")["out_of_order"]
    assert traced["makespan_s"] == pytest.approx(run(30, "rr")["makespan_s"])


# --- The thesis's worked examples (§6.1, Figures 6-8, pp. 41-43) -------------------------------------
# The figures' drawings and the runs that redo them live in the reproduction (thesis.FIG6, FIG8,
# thesis.worked_example), which the summary reports from too.

FIG6, FIG8, drawn, client_out_of_order = thesis.FIG6, thesis.FIG8, thesis.drawn, thesis.client_out_of_order
schedule = thesis.worked_example


@pytest.mark.parametrize(("mode", "figure"), [("rr", FIG6), ("lb", FIG8)])
def test_figures_6_and_8_schedules_and_out_of_order_packets(mode, figure):
    # 24 packets of one request (a 23 KB file: 23 full chunks and a short last one); interfaces 1 and 3
    # wait two periods after their second send (the X in the third slot).
    places, late, summary = schedule(mode, thesis.delayed(in_order=True))
    want, arrivals = drawn(figure)
    assert {p: places[(0, p)] for p in want} == want  # every packet on the drawn interface, in the drawn slot
    assert late[0] == client_out_of_order(arrivals)
    assert summary["out_of_order"] == len(client_out_of_order(arrivals))


def test_figures_6_and_8_out_of_order_counts_are_the_texts():
    # Figure 8's text (p. 43): "only 2 of 24 packets ... arrive out-of-order" (10 and 12); Figure 6's
    # (p. 42): each delayed interface sends every later packet out of order (7 of 24 as drawn).
    assert client_out_of_order(drawn(FIG8)[1]) == {10, 12}
    assert client_out_of_order(drawn(FIG6)[1]) == {10, 12, 14, 16, 18, 20, 22}


def test_figure_8_count_hangs_on_the_order_within_a_slot():
    # Without the phases the delayed links, re-armed earlier, send first in every later slot: the same
    # schedule as drawn, but the delayed links' packets now lead each slot and the others' trail them.
    places, late, _ = schedule("lb", thesis.delayed(in_order=False))
    want, _ = drawn(FIG8)
    assert {p: places[(0, p)] for p in want} == want
    assert len(late[0]) > len(client_out_of_order(drawn(FIG8)[1]))


def test_figure_7_round_robin_over_requests_with_gaps():
    # Figure 7 (p. 42): files of 7 packets requested one after another with a gap; round-robin's pointer
    # carries over, so File 2 starts on interface 3 and File 3 on interface 2. The text: File 1 all in
    # order, File 2 "2 of 7 packets arriving out of order", File 3 "only 3 of 7 ... in order".
    places, late, _ = schedule("rr", thesis.in_interface_order(), requests=3, file_bytes=thesis.FIG7_BYTES)
    first_link = {flow: places[(flow, 1)][0] for flow in range(3)}
    assert first_link == {0: 0, 1: 3, 2: 2}
    assert [len(late.get(flow, set())) for flow in range(3)] == [0, 2, 7 - 3]


# --- Timer noise on the paced links (`links.N.jitter`) ---------------------------------------------

LOG = ["workload.requests=3", "workload.clients=10", "workload.file_size={kind='fixed', bytes=716800}", "bond.mode=lb"]


def noisy(max_us: float, seed: int) -> list[int]:
    jitter = [f"links.{i}.jitter={{kind='uniform', max_us={max_us}}}" for i in range(4)]
    return list(bondsim.run("thesis", [*LOG, *jitter, f"seed={seed}"]).requests["out_of_order"])


def test_timer_noise_is_drawn_from_the_seed():
    assert noisy(50, 3) == noisy(50, 3)
    assert len({tuple(noisy(50, seed)) for seed in range(1, 9)}) > 1


def test_timer_noise_on_the_slow_interface_alone_moves_nothing_in_the_example_log():
    # §5.3.6's three 701-packet requests under lb: what the noise changes is the order of the fast
    # interfaces' sends within a slot, not the slow one's phase.
    plain = list(bondsim.run("thesis", LOG).requests["out_of_order"])
    jitter = "links.1.jitter={kind='uniform', max_us=200}"
    assert list(bondsim.run("thesis", [*LOG, jitter, "seed=2"]).requests["out_of_order"]) == plain
