"""Golden figures: run every scenario under every scheduler (and variants that
exercise each model feature) plus every reproduction, and write what they
report so that two versions of bondsim can be compared figure by figure.

    python benchmarks/golden.py write OUT_DIR [--scenarios DIR] [--no-reproduce]
    python benchmarks/golden.py diff BEFORE_DIR AFTER_DIR [--ignore events]

`write` stores, per case, the summary (without `wall_s`, the only
non-deterministic figure) and the per-request and per-link tables, and per
reproduction every CSV it writes. `diff` exits 1 and lists every case and
figure that differs. A refactoring that "moves no result" leaves `diff` silent;
one that runs fewer events for the same results (idle paced links waking outside
the event queue) leaves it silent with `--ignore events`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Variants run on top of each scenario file, beside the plain one (applied to every scheduler).
VARIANTS: dict[str, dict[str, list[str]]] = {
    "thesis": {
        "plain": [],
        "seed7": ["seed=7"],
        "zipf_poisson": [
            "workload.file_size={kind='zipfset'}",
            "workload.arrivals={kind='poisson', rate_per_s=30.0}",
            "workload.requests=60",
        ],
        "batches_uniform": [
            "workload.file_size={kind='uniform', min_bytes=1000, max_bytes=300000}",
            "workload.arrivals={kind='batches', size=10, every_s=0.5}",
            "workload.requests=40",
        ],
        "slow": [
            "links.0.slow_windows=[{start_s=0.5, end_s=2.0, slowdown=3.0}]",
            "links.2.intermittent={slow_s=0.3, normal_s=0.5, slowdown=2.5, random=true}",
            "links.3.slowdown=1.5",
        ],
        "trace_fail": [
            "links.1.trace_intervals_s=[0.05, 0.09, 0.02]",
            "links.2.failures=[{down_s=0.4, up_s=1.1}]",
            "bond.downdelay=200",
        ],
    },
    "hetero": {
        "plain": [],
        "jitter": [
            "links.0.jitter={kind='exponential', mean_us=20.0}",
            "links.1.jitter={kind='uniform', max_us=50.0}",
            "links.0.delay_us=30",
        ],
        "ackdelay_msg": ["sender.ack_delay_us=40", "sender.message_bytes=4000", "workload.requests=4"],
        "smallq": ["links.0.txqueuelen=8", "links.1.txqueuelen=4", "sender.window_pkts=128"],
        "lossy": ["links.0.loss=0.01", "links.1.loss_model={kind='gilbert_elliott', p=0.01, r=0.3}"],
    },
    "league": {
        "plain": [],
        "stop": ["stop_s=0.05"],
        "random_fail": [
            "links.1.random_failures={mtbf_s=0.05, mttr_s=0.02}",
            "bond.miimon=10",
            "bond.updelay=20",
        ],
        "vlan_router": ["network.vlan=42", "network.router_mac='02:00:00:00:00:fe'", "links.2.per_packet_us=1.5"],
        "normal_jitter": ["links.0.jitter={kind='normal', sd_us=5.0}", "links.3.slowdown=2"],
    },
    "failover_udp": {
        "plain": [],
        "udp": ["network.protocol='udp'", "workload.file_size={kind='fixed', bytes=20000000}"],
    },
    "lacp_flows": {"plain": [], "seed3": ["seed=3", "workload.requests=16"]},
    # An unaware switch (MAC learning, floods, balance-tlb/-alb's per-slave addresses) through a failover.
    "failover": {"plain": [], "unaware": ["switch.lag='none'"]},
    "xor_clients": {"plain": []},
    # TCP over reordering links under each congestion control (BBR's rate sampling and pacing, Reno
    # with losses to repair), 2 MB a flow to keep every scheduler's run short; a ping-pong's small
    # writes (Nagle, delayed ACKs); MPTCP's subflows.
    "tcp_rr": {
        "cubic": ["workload.file_size={kind='fixed', bytes=2000000}"],
        "bbr": ["workload.file_size={kind='fixed', bytes=2000000}", "sender.tcp_congestion_control='bbr'"],
        "reno_lossy": [
            "workload.file_size={kind='fixed', bytes=2000000}",
            "sender.tcp_congestion_control='reno'",
            "links.0.loss=0.005",
        ],
    },
    "pingpong": {"plain": []},
    "mptcp": {"plain": []},
}


#: Columns of reproduction tables that are not figures: wall time, and the scenario as text (and its
#: hash), whose spelling may change with the schema while the run stays the same.
VOLATILE = {"wall_s", "scenario", "scenario_hash", "run_id", "version"}


def _table(text: str) -> dict:
    import io

    import pandas as pd

    frame = pd.read_csv(io.StringIO(text))
    return frame.drop(columns=[c for c in frame.columns if c in VOLATILE]).to_dict(orient="list")


def _clean(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "wall_s"}


def write(out: Path, scenarios: Path, reproduce: bool) -> None:
    import bondsim
    from bondsim import _core

    out.mkdir(parents=True, exist_ok=True)
    modes = [s["name"] for s in json.loads(_core.schedulers())]
    cases = 0
    for name, variants in VARIANTS.items():
        path = scenarios / f"{name}.toml"
        records = {}
        for variant, overrides in variants.items():
            for mode in modes:
                key = f"{variant}/{mode}"
                try:
                    result = bondsim.run(path, [*overrides, f"bond.mode={mode}"])
                except Exception as err:  # an error is a result too: it must not change either
                    records[key] = {"error": str(err)}
                    continue
                records[key] = {
                    "summary": _clean(result.summary),
                    "requests": result.requests.to_dict(orient="list"),
                    "links": result.links.to_dict(orient="list"),
                }
                cases += 1
        (out / f"{name}.json").write_text(json.dumps(records, sort_keys=True, default=str))
        print(f"{name}: {len(records)} cases", file=sys.stderr)
    if reproduce:
        from bondsim.reproduce import PAPERS

        for name, module in PAPERS.items():
            with tempfile.TemporaryDirectory() as tmp:
                module.reproduce(Path(tmp), progress=False)
                tables = {p.name: p.read_text() for p in sorted(Path(tmp).glob("*.csv"))}
            (out / f"reproduce-{name}.json").write_text(json.dumps(tables, sort_keys=True))
            print(f"reproduce {name}: {len(tables)} tables", file=sys.stderr)
    print(f"{cases} runs written to {out}", file=sys.stderr)


#: Differences printed per file (all are counted).
SHOWN = 8


def _differences(before, after, where: str, found: list[str], ignore: frozenset[str] = frozenset()) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted((set(before) | set(after)) - ignore):
            if key not in before or key not in after:
                found.append(f"{where}.{key}: only in {'after' if key not in before else 'before'}")
            else:
                _differences(before[key], after[key], f"{where}.{key}", found, ignore)
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            _differences(b, a, f"{where}[{i}]", found, ignore)
    elif before != after and not (before != before and after != after):  # NaN equals NaN here
        found.append(f"{where}: {str(before)[:80]} -> {str(after)[:80]}")


def diff(before: Path, after: Path, ignore: frozenset[str] = frozenset()) -> int:
    found: list[str] = []
    files = sorted({p.name for p in before.glob("*.json")} | {p.name for p in after.glob("*.json")})
    for name in files:
        a, b = before / name, after / name
        if not a.exists() or not b.exists():
            found.append(f"{name}: missing in {'before' if not a.exists() else 'after'}")
            continue
        here: list[str] = []
        old, new = json.loads(a.read_text()), json.loads(b.read_text())
        if name.startswith("reproduce-"):
            old = {k: _table(v) for k, v in old.items()}
            new = {k: _table(v) for k, v in new.items()}
        _differences(old, new, name, here, ignore=ignore)
        found.extend(here)
    added = sorted({line.split(": ")[0].rsplit(".", 1)[-1] for line in found if line.endswith("only in after")})
    moved = [line for line in found if not line.endswith("only in after")]
    for name in files:
        mine = [line for line in moved if line.startswith(f"{name}.") or line.startswith(f"{name}:")]
        for line in mine[:SHOWN]:
            print(line)
        if len(mine) > SHOWN:
            print(f"{name}: {len(mine) - SHOWN} more")
    if added:
        print(f"new figures (not in before, not a difference): {', '.join(added)}", file=sys.stderr)
    print(f"{len(files)} files compared, {len(moved)} differences", file=sys.stderr)
    return 1 if moved else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="run every case and write its figures into OUT")
    w.add_argument("out", type=Path)
    w.add_argument(
        "--scenarios",
        type=Path,
        default=ROOT / "python" / "bondsim" / "scenarios",
        help="folder of the scenario files (default: the shipped ones)",
    )
    w.add_argument("--no-reproduce", action="store_true", help="skip the reproductions")
    d = sub.add_parser("diff", help="list every figure that differs between two written folders")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    d.add_argument(
        "--ignore",
        default="",
        help="figures (summary fields, table columns) to leave out, comma-separated: e.g. `events`, "
        "when a change runs fewer events for the same results",
    )
    args = parser.parse_args()
    if args.command == "write":
        write(args.out, args.scenarios, not args.no_reproduce)
        return 0
    return diff(args.before, args.after, frozenset(filter(None, args.ignore.split(","))))


if __name__ == "__main__":
    sys.exit(main())
