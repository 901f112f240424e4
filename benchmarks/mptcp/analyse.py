#!/usr/bin/env python3
"""Tables for benchmarks/results/mptcp-trial.md from the raw runs of mptcp_trial.py: reads
DIR/NAME/run-K.json (DIR as mptcp_trial.py's --out, default /tmp/mptcp-trial) and prints Markdown
tables (min / median / max over the runs) and the subflow events of run 0 to stdout.

    python3 analyse.py [DIR] > DIR/tables.md

Needs no root (it only reads JSON); takes about a second.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mptcp_trial as m


def s3(v, p=2):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    return f"{min(v):.{p}f} / {statistics.median(v):.{p}f} / {max(v):.{p}f}"


def case_runs(results, case):
    return [json.loads(p.read_text()) for p in sorted((results / case).glob("run-*.json"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "dir", nargs="?", type=Path, default=m.DEFAULT_OUT, metavar="DIR", help=f"results (default {m.DEFAULT_OUT})"
    )
    results = ap.parse_args().dir
    cases = [c for c in m.CASES if (results / c).is_dir()] + (["capture"] if (results / "capture").is_dir() else [])
    print(
        "| case | links Mbit/s | runs | goodput Mbit/s | completion s | TCP retrans (sender) | "
        "bytes per subflow (a; b) | MPTCP OFO inserts | DuplicateData | MPTCPRetrans |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for c in cases:
        runs = case_runs(results, c)
        figs = [m.figures(r) for r in runs]
        cfg = runs[0]["config"]
        sf = []
        for i in range(max(len(f["subflows"]) for f in figs)):
            sf.append(s3([f["subflows"][i]["bytes_sent"] / 1e6 for f in figs if len(f["subflows"]) > i], 3))
        print(
            f"| {c} | {cfg['rates'][0]:g} + {cfg['rates'][1]:g} | {len(runs)} | "
            f"{s3([f['goodput_mbps'] for f in figs])} | {s3([f['completion_s'] for f in figs])} | "
            f"{s3([f['retrans_segs'] for f in figs], 0)} | {'; '.join(sf) or '-'} MB | "
            f"{s3([f['MPTcpExtOFOQueue'] for f in figs], 0)} | {s3([f['MPTcpExtDuplicateData'] for f in figs], 0)} | "
            f"{s3([f['MPTcpExtMPTCPRetrans'] for f in figs], 0)} |"
        )
    print()
    print("| case | subflow (client addr) | retrans segs | RTOs | srtt at end, ms | snd_mss | CC (ss, both ends) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for c in cases:
        runs = case_runs(results, c)
        figs = [m.figures(r) for r in runs]
        for i in range(max(len(f["subflows"]) for f in figs)):
            rows = [f["subflows"][i] for f in figs if len(f["subflows"]) > i]
            loc = rows[0]["local"] if not rows[0]["local"].startswith("10.77.0.2") else rows[0]["remote"]
            print(
                f"| {c} | {loc.split(':')[0]} | {s3([r['total_retrans'] for r in rows], 0)} | "
                f"{s3([r['total_rto'] for r in rows], 0)} | {s3([r['rtt_us'] / 1000 for r in rows], 1)} | "
                f"{sorted({r['snd_mss'] for r in rows})} | {sorted({x for f in figs for x in f['ss_cc']})} |"
            )
    print()
    print(
        "| case | fail at s | first MPTCP rtx after fail, s | longest app-level gap after fail, s | "
        "SubflowStale after fail, s | recover after restore, s | failed link carries again, s |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in cases:
        runs = case_runs(results, c)
        if not runs[0]["config"].get("fail"):
            continue
        figs = [m.figures(r) for r in runs]
        print(
            f"| {c} | {s3([f.get('fail_at_s') for f in figs], 3)} | "
            f"{s3([f.get('first_mptcp_rtx_after_s') for f in figs], 3)} | "
            f"{s3([f.get('max_app_gap_after_fail_s') for f in figs], 3)} | "
            f"{s3([f.get('stale_after_s') for f in figs], 3)} | "
            f"{s3([f.get('recover_after_restore_s') for f in figs], 3)} | "
            f"{s3([f.get('failed_link_carries_again_after_restore_s') for f in figs], 3)} |"
        )
    print()
    print("subflow events (ip mptcp monitor, s after connect(), run 0):")
    for c in cases:
        f = m.figures(case_runs(results, c)[0])
        print(f"  {c}: {[(t, e, a) for t, e, a in f['monitor'] if e != 'CLOSED']}")


if __name__ == "__main__":
    main()
