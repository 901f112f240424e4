"""The emulator from Python: a scenario's scheduler over the Linux kernel's own TCP
(:func:`emulate_doc`), and the simulator beside it on the host the emulator builds
(:func:`validate_rows`). The commands (``bondsim emulate``, ``bondsim validate``) are
:mod:`bondsim.cli.emulate`.

The emulator (crates/bondsim-emu) makes a network namespace for the server and one per client, each
with a TUN device, runs the scenario's requests as real TCP transfers between them, and carries every
packet through the scenario's bond and emulated links in this process. Linux only, as root.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim import _core
from bondsim._core import BondsimError
from bondsim.progress import Bar

if TYPE_CHECKING:
    from bondsim.api import RunResult

#: An emulation's progress is shown once it has taken this long, seconds.
EMULATE_QUIET_S = 3.0

#: What ``--traffic`` takes, the default first: the emulator's own sockets, or iperf3 tests (Debian's
#: iperf3 on the PATH). The emulator's own list (empty where there is no emulator: not Linux).
TRAFFIC: tuple[str, ...] = tuple(getattr(_core, "EMU_TRAFFIC", ()))


def emulate_doc(
    doc: dict,
    seconds: float | None = None,
    *,
    label: str = "emulating",
    quiet: bool = True,
    traffic: str | None = None,
):
    """Runs a loaded scenario dict on the emulator; returns a :class:`bondsim.api.RunResult`. ``traffic``: one
    of :data:`TRAFFIC` (default: the first)."""
    from bondsim.api import RunResult

    if not hasattr(_core, "emulate"):
        raise BondsimError("the emulator runs on Linux only")
    limit = seconds or doc.get("stop_s") or 60.0
    stops = f" (it stops at {limit:,.0f} s)"
    bar = Bar(label, 0, not quiet, unit="requests done", after_s=EMULATE_QUIET_S, detail=lambda _: stops)
    try:
        text = _core.emulate(json.dumps(doc), seconds, bar, traffic)
    finally:
        bar.close()
    return RunResult.from_json(doc, text)


def store(db: Path, results: list[tuple[RunResult, str]]) -> list[int]:
    """Stores ``(RunResult, engine)`` pairs in ``db``; their run ids."""
    from bondsim.store import Store

    with Store(db) as opened:
        return [opened.add_result(result, engine) for result, engine in results]


#: The figures ``bondsim validate`` puts side by side: (column, summary field, scale).
VALIDATE_FIGURES = (
    ("goodput_mbps", "goodput_bps", 1e-6),
    ("retransmits", "tcp_retransmits", 1),
    ("spurious", "tcp_spurious_retransmits", 1),
    ("paws_drops", "tcp_paws_drops", 1),
    ("ooo_share", "wire_ooo_fraction", 1),
    # The path each side saw: the least RTT any connection sampled (the kernel's `tcpi_min_rtt`); the emulator's
    # TUN devices and fabric lengthen it beyond the scenario's delays.
    ("min_rtt_us", "tcp_min_rtt_min_us", 1),
)

#: What ``bondsim validate`` adds for a scenario with the clients' NIC (``[host]``, no CPU cost): the skbs the
#: clients' stacks took (the kernel's ``Ip.InReceives``: GRO's merged skbs once) and the frames they came in.
VALIDATE_HOST_FIGURES = (
    ("rx_skbs", "host_rx_skbs", 1),
    ("rx_frames", "host_rx_frames", 1),
)

#: What ``bondsim validate`` adds for an MPTCP scenario (``sender.kind = "mptcp"``): the model's figures the kernel
#: counts too (its ``MPTcpExt`` counters, crates/bondsim-emu/src/realtime.rs).
VALIDATE_MPTCP_FIGURES = (
    ("mptcp_stale", "mptcp_stale", 1),
    ("mptcp_recovered", "mptcp_recovered", 1),
    ("mptcp_duplicates", "mptcp_duplicates", 1),
)


def validate_rows(
    doc: dict, modes: list[str], seconds: float | None, quiet: bool, db: Path | None = None, traffic: str | None = None
) -> list[dict]:
    """Per scheduler, the simulator's and the emulator's figures and their difference (emulator − simulator;
    for goodput also relative to the emulator); with ``db``, both runs are stored there and their ids given.

    The simulator runs the host the emulator builds (``_core.emulated_host``: beyond the TUN device where the kernel
    stops counting a frame, ``placement = "tun"``; or with an HTB class per link in the kernel, ``"shaper"``); the
    row says which (``placement``)."""
    from bondsim.api import run_checked
    from bondsim.scenario import load

    mptcp = doc.get("sender", {}).get("kind") == "mptcp"
    if mptcp and len(modes) > 1:
        raise BondsimError(
            '--modes: an MPTCP scenario (sender.kind = "mptcp") puts each subflow on its own link, no bond scheduler '
            "places a packet: give one mode or none"
        )
    figures = (
        VALIDATE_FIGURES + (VALIDATE_MPTCP_FIGURES if mptcp else ()) + (VALIDATE_HOST_FIGURES if "host" in doc else ())
    )
    rows = []
    for mode in modes:
        one = load(doc, [f"bond.mode={mode}"])
        _core.emulate_check(json.dumps(one))
        host, placement = _core.emulated_host(json.dumps(one))
        simulated = run_checked(json.loads(host))
        what = "mptcp" if mptcp else mode  # (no bond places an MPTCP run's packets)
        emulated = emulate_doc(one, seconds, label=f"emulating {what}", quiet=quiet, traffic=traffic)
        sim, emu = simulated.summary, emulated.summary
        row: dict[str, Any] = {"scheduler": sim["scheduler"], "placement": placement}
        if db is not None:
            row["sim_run_id"], row["emu_run_id"] = store(db, [(simulated, "simulator"), (emulated, "emulator")])
        for column, field, scale in figures:
            s, e = (sim[field] or 0) * scale, (emu[field] or 0) * scale
            row |= {f"sim_{column}": s, f"emu_{column}": e, f"diff_{column}": e - s}
        row["goodput_diff_share"] = (row["diff_goodput_mbps"] / row["emu_goodput_mbps"]) if emu["goodput_bps"] else None
        row["emu_congestion_control"] = emu.get("emu_congestion_control")
        row["emu_lateness_p99_us"] = emu["emu_lateness_p99_us"]
        row["emu_warnings"] = "; ".join(emu["emu_warnings"])
        rows.append(row)
    return rows
