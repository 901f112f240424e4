"""``bondsim validate --league``: a named set of cases, each the model beside several runs of the kernel.

Every case is the shipped scenario ``kernel_league`` with a few fields set (where the links' queues are, mode, link
rates, flows, congestion control, random loss). Both sides run the host the emulator builds for it
(``_core.emulated_host``): ``tun`` cases have the bond and the queues beyond the TUN device, where the kernel
stops counting a frame; ``shaper`` cases an HTB class per link in the kernel, which the socket is charged for
until HTB starts the frame; ``downstream`` cases a 100 Mbit/s NIC stage (a kernel HTB class where the mode can
run in the kernel, else beyond TUN) and the line beyond it. The kernel runs ``runs`` times, the model once per
seed of ``MODEL_SEEDS`` (it is deterministic per seed: the seeds show its own spread).

A case **agrees** when the model's goodput (seed 1) lies within the kernel's min-max widened by 10%,
and its retransmissions within the kernel's min-max widened by a factor 2 (or by +-30 when both are
below 30); a case with a clients' NIC (``Case.gro``: interrupt moderation, GRO on or off behind it) also when
the skbs the clients' stacks took (GRO's merged ones once) lie within the kernel's min-max widened by 10%.
Nothing here is fitted to the league.

The emulator's own path is not the scenario's: TUN and its userspace fabric add some hundred microseconds to each
round trip and write each frame a little late (``emu_lateness_*``). So every case is also judged on **the path
the kernel measured** (:func:`measured_host`): each link's delay grown by half the difference between the kernel's
least RTT (``tcpi_min_rtt``, the median of its runs) and the model's, and each frame late by an exponential delay
whose median is the kernel runs' median lateness. Both are taken from the case's kernel runs, as a ping before a
test would be; neither is fitted to the judged figures. The headline (``agrees``) stays on the scenario's path;
``agrees_measured_path`` says whether the model agrees on the measured one.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from dataclasses import dataclass
from typing import Any

from bondsim import _core

#: The model's seeds, for its own spread beside the kernel's.
MODEL_SEEDS = (1, 2, 3, 4, 5)

#: Link rates, Mbit/s, by name.
RATES = {
    "equal": (10, 10),
    "2:1": (10, 5),
    "10:1": (20, 2),
    "3+1": (10, 10, 10, 5),
    # The clients' NIC cases (``Case.gro``): fast enough that a moderated interrupt finds several frames.
    "50+50": (50, 50),
    "50+25": (50, 25),
}

#: balance-xor with the layer3+4 transmit hash (the league's name for it).
XOR = "balance-xor+l34"

#: The figures a case is judged by (columns of ``bondsim.emulate.VALIDATE_FIGURES``).
JUDGED = ("goodput_mbps", "retransmits")

#: Payload bytes per case, split evenly over its flows.
TOTAL_BYTES = 4_000_000

#: The league's name for Linux's MPTCP in place of a bond (``sender.kind = "mptcp"``: a subflow per link).
MPTCP = "mptcp"

#: When an MPTCP case's failing link goes down, seconds (``Case.fails``): within its transfer's first half.
FAIL_AT_S = 0.5

#: Where a case's link queues are (``Case.placement``).
PLACEMENTS = ("tun", "shaper", "downstream")

#: A downstream case's NIC, Mbit/s: the line (the case's rate) is the bottleneck.
DOWNSTREAM_NIC_MBPS = 100

#: The clients' NIC in a case that sets one (``Case.gro``): its receive interrupts at least this far apart, µs
#: (``[host] rx_coalesce_us``; the e1000's ``InterruptThrottleRate=2000``, 1e6 / 2000), and its ring.
NIC_MODERATION_US = 500
NIC_RING = 1024

#: What a case with a clients' NIC is judged by besides (a column of ``bondsim.emulate.VALIDATE_HOST_FIGURES``): the
#: skbs the clients' stacks took (the kernel's ``Ip.InReceives``, the model's ``host_rx_skbs``), within the kernel's
#: min-max widened by 10%.
NIC_JUDGED = ("rx_skbs",)


@dataclass(frozen=True)
class Case:
    """One league case: what it sets on the base scenario."""

    mode: str
    rates: str = "equal"
    flows: int = 1
    cc: str = "cubic"
    loss: float = 0.0
    placement: str = "tun"
    #: MPTCP only: the second link's subflow is a backup (``sender.mptcp_backup``).
    backup: bool = False
    #: The first link fails at :data:`FAIL_AT_S` and stays down.
    fails: bool = False
    #: The clients' NIC moderates its interrupts (:data:`NIC_MODERATION_US`), GRO on (True) or off (False) behind
    #: it (``[host]``: the emulator's TUN device with ``IFF_NAPI``); None: no ``[host]``.
    gro: bool | None = None

    @property
    def name(self) -> str:
        loss = f" loss {self.loss:.0%}" if self.loss else ""
        where = "" if self.placement == "tun" else f"{self.placement}: "
        extra = (" link1 backup" if self.backup else "") + (" link0 fails" if self.fails else "")
        if self.gro is not None:
            extra += f" irq {NIC_MODERATION_US}us gro {'on' if self.gro else 'off'}"
        return f"{where}{self.mode.replace(XOR, 'xor l3+4')} {self.rates} x{self.flows} {self.cc}{loss}{extra}"

    def _link(self, rate: int, first: bool = False) -> str:
        loss = f", loss={self.loss}" if self.loss else ""
        if self.fails and first:
            loss += f", failures=[{{down_s={FAIL_AT_S}}}]"
        if self.placement == "downstream":
            line = f"downstream={{rate_mbps={rate}, delay_us=2000}}"
            return f"{{rate_mbps={DOWNSTREAM_NIC_MBPS}, delay_us=0, {line}{loss}}}"
        where = ', placement="shaper"' if self.placement == "shaper" else ""
        return f"{{rate_mbps={rate}, delay_us=2000{where}{loss}}}"

    def sets(self) -> list[str]:
        """The ``--set`` overrides that make this case of the base scenario."""
        mode = "balance-xor" if self.mode == XOR else self.mode
        links = ", ".join(self._link(r, i == 0) for i, r in enumerate(RATES[self.rates]))
        sets = [
            "sender.kind=mptcp" if self.mode == MPTCP else f"bond.mode={mode}",
            f"workload.clients={self.flows}",
            f"workload.requests={self.flows}",
            f"workload.file_size.bytes={TOTAL_BYTES // self.flows}",
            f"sender.tcp_congestion_control={self.cc}",
            f"links=[{links}]",
        ]
        if self.mode == XOR:
            sets.append("bond.xmit_hash_policy=layer3+4")
        if self.backup:
            sets.append('sender.mptcp_backup=["link1"]')
        if self.gro is not None:
            sets.append(f"host={{rx_coalesce_us={NIC_MODERATION_US}, rx_ring={NIC_RING}, gro={str(self.gro).lower()}}}")
        return sets


def _cases() -> list[Case]:
    modes = ("balance-rr", XOR, "earliest-finish", "active-backup")
    cases = [Case(m, rates) for m in modes for rates in RATES]  # every mode on every rate set
    cases += [Case(m, r, flows) for flows in (4, 16) for m in modes[:2] for r in ("equal", "2:1")]
    cases += [Case(m, "3+1", 4) for m in modes[:3]] + [Case("balance-rr", "3+1", 16)]
    for cc in _core.CONGESTION_CONTROLS:
        if cc != "cubic":
            cases += [Case(m, r, 1, cc) for m in modes[:2] for r in ("equal", "2:1")]
    cases += [Case(m, "equal", 1, "cubic", 0.01) for m in modes]
    cases += [Case(m, "2:1", 4, "cubic", 0.01) for m in modes[:2]]
    cases += [Case(m, "equal", 1, "reno", 0.01) for m in modes[:2]]
    # The host's queues in the kernel: the modes the kernel can run (no earliest-finish).
    kernel = ("balance-rr", XOR, "active-backup")
    cases += [Case(m, r, placement="shaper") for m in kernel for r in ("equal", "2:1", "3+1")]
    cases += [Case("balance-rr", "10:1", placement="shaper"), Case("balance-rr", "2:1", 4, placement="shaper")]
    cases += [Case("balance-rr", "equal", 16, placement="shaper")]
    cases += [Case("balance-rr", "2:1", 1, cc, placement="shaper") for cc in ("reno", "bbr")]
    cases += [Case("balance-rr", "equal", 1, "cubic", 0.01, "shaper")]
    # A line beyond a faster NIC: earliest-finish too (its bond beyond TUN).
    cases += [Case(m, "2:1", placement="downstream") for m in ("balance-rr", "earliest-finish")]
    cases += [Case("earliest-finish", "3+1", 4, placement="downstream"), Case(XOR, "equal", 4, placement="downstream")]
    cases += [Case("active-backup", "equal", placement="downstream")]
    cases += [Case("balance-rr", "2:1", 1, "bbr", placement="downstream")]
    # Linux's MPTCP in place of a bond, a subflow per link (issue 36): the rate sets, more connections,
    # the other controls, lines beyond a faster NIC (its queues then the kernel's), a backup, a failure.
    cases += [Case(MPTCP, rates) for rates in RATES]
    cases += [Case(MPTCP, r, 4) for r in ("equal", "2:1")]
    cases += [Case(MPTCP, "2:1", 1, cc) for cc in ("reno", "bbr")]
    cases += [Case(MPTCP, r, placement="downstream") for r in ("equal", "2:1", "10:1")]
    cases += [Case(MPTCP, "equal", backup=True), Case(MPTCP, "equal", fails=True), Case(MPTCP, "2:1", fails=True)]
    cases += [Case(MPTCP, "equal", backup=True, fails=True)]
    return cases + _nic_cases()


def _nic_cases() -> list[Case]:
    """The clients' NIC moderating its interrupts, GRO behind it: in order (one link), striped over equal and unequal
    links, several flows, loss; without GRO for the baseline."""
    cases = [Case("active-backup", "50+50", gro=gro) for gro in (False, True)]
    cases += [Case("balance-rr", r, gro=True) for r in ("50+50", "50+25")]
    cases += [Case(XOR, "50+50", 4, gro=True), Case("balance-rr", "50+50", 4, gro=True)]
    cases += [Case(m, "50+50", 1, "cubic", 0.01, gro=True) for m in ("active-backup", "balance-rr")]
    cases += [Case(MPTCP, "50+25", gro=True)]
    return cases


#: Every league, by name: the full one, its MPTCP cases alone (`mptcp`), its cases with a clients' NIC (`gro`), and
#: `quick` (six cases, one with kernel queues, one MPTCP, one with GRO behind a moderated NIC; one kernel run each is
#: enough to check that it runs and records: what `make test` runs as root).
LEAGUES: dict[str, list[Case]] = {
    "full": _cases(),
    "mptcp": [c for c in _cases() if c.mode == MPTCP],
    "gro": _nic_cases(),
    "quick": [
        Case("balance-rr", "2:1"),
        Case(XOR, "equal", 4),
        Case("active-backup", "equal"),
        Case("balance-rr", "2:1", placement="shaper"),
        Case(MPTCP, "2:1"),
        Case("active-backup", "50+50", gro=True),
    ],
}


def widened(low: float, high: float, value: float, *, share: float | None = None, factor: float | None = None) -> bool:
    """Whether ``value`` lies within ``[low, high]`` widened by ``share`` (relative) or by ``factor`` (or by
    +-30 when ``value`` and ``high`` are both below 30)."""
    if share is not None:
        return low * (1 - share) <= value <= high * (1 + share)
    assert factor is not None
    if value < 30 and high < 30:
        return low - 30 <= value <= high + 30
    return low / factor <= value <= high * factor


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def case_row(case: Case, sims: list[dict], emus: list[dict], loads: list[float], placement: str) -> dict[str, Any]:
    """One league row: the case, the model (seed 1, and its spread over seeds), the kernel's runs, agreement."""
    from bondsim.emulate import VALIDATE_FIGURES, VALIDATE_HOST_FIGURES

    row: dict[str, Any] = {
        "case": case.name,
        "placement": placement,
        "where": case.placement,
        "mode": case.mode,
        "rates": case.rates,
        "flows": case.flows,
        "cc": case.cc,
        "loss": case.loss,
        "kernel_runs": len(emus),
    }
    judged = JUDGED + (NIC_JUDGED if case.gro is not None else ())
    for column, field, scale in (f for f in VALIDATE_FIGURES + VALIDATE_HOST_FIGURES if f[0] in judged):
        model = [(s[field] or 0) * scale for s in sims]
        kernel = [(e[field] or 0) * scale for e in emus]
        row[f"model_{column}"] = model[0]
        row |= {f"model_{column}_{k}": v for k, v in _spread(model).items()}
        row |= {f"kernel_{column}_{k}": v for k, v in _spread(kernel).items()}
    if case.mode == MPTCP:  # reported beside, not judged: what the connection level did
        for figure in ("mptcp_stale", "mptcp_duplicates"):
            row[f"model_{figure}"] = sims[0].get(figure)
            row |= {f"kernel_{figure}_{k}": v for k, v in _spread([e.get(figure) or 0 for e in emus]).items()}
    row["model_paws_drops"] = sims[0].get("tcp_paws_drops")
    row["kernel_paws_drops_median"] = statistics.median(e.get("tcp_paws_drops") or 0 for e in emus)
    row["kernel_congestion_control"] = ",".join(sorted({str(e.get("emu_congestion_control")) for e in emus}))
    row["load_mean"] = statistics.fmean(loads)
    row["lateness_p99_us_max"] = max(e["emu_lateness_p99_us"] for e in emus)
    row["agrees_goodput"], row["agrees_retransmits"] = _judge(row, row["model_goodput_mbps"], row["model_retransmits"])
    row["agrees"] = row["agrees_goodput"] and row["agrees_retransmits"]
    if case.gro is not None:  # the clients' NIC: how many skbs GRO made of the frames
        row["model_rx_frames"] = sims[0].get("host_rx_frames")
        row["kernel_rx_frames_median"] = statistics.median(e.get("host_rx_frames") or 0 for e in emus)
        low, high = row["kernel_rx_skbs_min"], row["kernel_rx_skbs_max"]
        row["agrees_rx_skbs"] = widened(low, high, row["model_rx_skbs"], share=0.1)
        row["agrees"] = row["agrees"] and row["agrees_rx_skbs"]
    return row


def _judge(row: dict[str, Any], goodput: float, retransmits: float) -> tuple[bool, bool]:
    """Whether a model's goodput, and its retransmissions, agree with the row's kernel runs (the league's rule)."""
    return (
        widened(row["kernel_goodput_mbps_min"], row["kernel_goodput_mbps_max"], goodput, share=0.1),
        widened(row["kernel_retransmits_min"], row["kernel_retransmits_max"], retransmits, factor=2.0),
    )


def kernel_min_rtt_us(emus: list[dict]) -> float | None:
    """The median over the kernel runs of their least RTT (``tcp_min_rtt_min_us``), None where none recorded it."""
    rtts = [e["tcp_min_rtt_min_us"] for e in emus if e.get("tcp_min_rtt_min_us")]
    return statistics.median(rtts) if rtts else None


def measured_host(host: dict, model: dict, emus: list[dict]) -> tuple[dict, dict[str, float]] | None:
    """The case's host on the path its kernel runs measured: each link's delay grown by half the difference of the
    least RTTs (the kernel's ``tcp_min_rtt_min_us``, median over runs, less the model's), at least 0 (a link's delay
    counts both ways: ``RateLink::mirror``); each data frame late by an exponential delay whose median
    (``mean · ln 2``) is the runs' median ``emu_lateness_p50_us`` (the emulator writes ACKs late too; the model's
    jitter is the sending side's and is not mirrored, so the ACKs' lateness is left out). Returns
    the host and what was put in (µs); None when the runs did not record their least RTT (kernel runs stored
    before the emulator reported it, 2026-11-30)."""
    kernel_rtt, model_rtt = kernel_min_rtt_us(emus), model.get("tcp_min_rtt_min_us")
    if not kernel_rtt or not model_rtt:
        return None
    extra = (kernel_rtt - model_rtt) / 2
    late = statistics.median(e.get("emu_lateness_p50_us") or 0.0 for e in emus)
    links = []
    for link in host["links"]:
        link = dict(link, delay_us=max(0.0, link["delay_us"] + extra))
        if late > 0:
            link["jitter"] = {"kind": "exponential", "mean_us": late / math.log(2)}
        links.append(link)
    return {**host, "links": links}, {"path_extra_us": extra, "lateness_median_us": late}


def measured_columns(row: dict[str, Any], host: dict, sims: list[dict], emus: list[dict]) -> list:
    """Judges the case again on the kernel's measured path (:func:`measured_host`), on the model's first seed: adds
    the columns to ``row`` (None where the path was not measured); returns the run as ``(RunResult, "simulator")``
    pairs, to store."""
    from bondsim.api import run_checked

    row["model_min_rtt_us"] = sims[0].get("tcp_min_rtt_min_us")
    row["kernel_min_rtt_us_median"] = kernel_min_rtt_us(emus)
    # MPTCP: TCP_INFO on an MPTCP socket is its first subflow's alone (`mptcp_getsockopt_first_sf_only`,
    # net/mptcp/sockopt.c, 6.18), and its least RTT came out at 4,000 us exactly (below the path), the median in 9 of
    # the league's 15 MPTCP cases (2026-11-30): not the path's measure, so these cases are not judged on it.
    measured = None if row["mode"] == MPTCP else measured_host(host, sims[0], emus)
    if measured is None:
        row |= dict.fromkeys(MEASURED_COLUMNS)
        return []
    host, put = measured
    result = run_checked({**host, "seed": MODEL_SEEDS[0]})
    goodput, retransmits = (result.summary["goodput_bps"] or 0) * 1e-6, result.summary["tcp_retransmits"] or 0
    row |= put
    row["measured_path_goodput_mbps"], row["measured_path_retransmits"] = goodput, retransmits
    row["agrees_measured_path"] = all(_judge(row, goodput, retransmits))
    return [(result, "simulator")]


#: The columns :func:`measured_columns` adds beside the least RTTs.
MEASURED_COLUMNS = (
    "path_extra_us",
    "lateness_median_us",
    "measured_path_goodput_mbps",
    "measured_path_retransmits",
    "agrees_measured_path",
)


def run_case(case: Case, base: dict, runs: int, seconds: float | None, traffic: str | None, store) -> dict[str, Any]:
    """Runs one case: the model on every seed of :data:`MODEL_SEEDS`, the kernel ``runs`` times; ``store``
    (a callable taking ``(RunResult, engine)`` pairs) keeps every run when given."""
    from bondsim.emulate import emulate_doc

    doc, host, placement, sims, results = _model_side(case, base)
    emus, loads = [], []
    for _ in range(runs):
        loads.append(os.getloadavg()[0])
        result = emulate_doc(doc, seconds, quiet=True, traffic=traffic)
        emus.append(result.summary)
        results.append((result, "emulator"))
    row = case_row(case, sims, emus, loads, placement)
    results += measured_columns(row, host, sims, emus)
    ids = store(results) if store is not None else []
    row["run_ids"] = ",".join(map(str, ids))  # the model's seeds, the kernel's runs, the model on the measured path
    return row


def _model_side(case: Case, base: dict) -> tuple[dict, dict, str, list[dict], list]:
    """The case's scenario, the host the emulator builds for it (as a scenario, and in words), and the model's runs
    on that host, one per seed of :data:`MODEL_SEEDS` (summaries, and ``(RunResult, "simulator")`` pairs)."""
    from bondsim.api import run_checked
    from bondsim.scenario import load

    doc = load(base, case.sets())
    _core.emulate_check(json.dumps(doc))
    host_json, placement = _core.emulated_host(json.dumps(doc))
    host = json.loads(host_json)
    sims, results = [], []
    for seed in MODEL_SEEDS:
        result = run_checked({**host, "seed": seed})
        sims.append(result.summary)
        results.append((result, "simulator"))
    return doc, host, placement, sims, results


def rejudge(cases: list[Case], base: dict, stored, league_ref: str | None) -> tuple[int, list[dict[str, Any]]]:
    """The model run again (this build) beside the kernel runs a stored league measured: per case of
    ``cases`` found in it, the model's seeds anew, the kernel's stored summaries, the row as
    :func:`case_row` makes it (the load as recorded then). ``stored``: an open writable ``Store``; the
    model's runs are stored there too. Returns the league's id and the rows."""
    league_id, _, old = stored.league(league_ref)
    by_name = {c.name: c for c in cases}
    runs = stored.runs()
    engines = dict(zip(runs["run_id"].astype(int), runs["engine"], strict=True))
    rows = []
    for _, before in old.iterrows():
        case = by_name.get(str(before["case"]))
        ids = [int(i) for i in str(before.get("run_ids") or "").split(",") if i]
        kernel_ids = [i for i in ids if engines.get(i) == "emulator"]
        if case is None or not kernel_ids:
            raise _core.BondsimError(
                f"--rejudge: league {league_id}'s case `{before['case']}` is not in this league, or its kernel runs "
                "were not stored (run_ids)"
            )
        summaries = stored.summaries(kernel_ids)
        _, host, placement, sims, results = _model_side(case, base)
        emus = [summaries[i] for i in kernel_ids]
        loads = [float(before["load_mean"])] * len(kernel_ids)
        row = case_row(case, sims, emus, loads, placement)
        measured = measured_columns(row, host, sims, emus)
        model_ids = [stored.add_result(result, engine) for result, engine in results + measured]
        row["run_ids"] = ",".join(map(str, model_ids[: len(results)] + kernel_ids + model_ids[len(results) :]))
        row["kernel_from_league"] = league_id
        rows.append(row)
    return league_id, rows
