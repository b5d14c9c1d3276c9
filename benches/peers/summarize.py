#!/usr/bin/env python3
"""Print the peer bench's records (benches/peers/results/peers.jsonl) as a Markdown table.

    python3 benches/peers/summarize.py [RESULTS.jsonl]

Standard library only. Records of runs that did not finish are listed with their status.
"""

import json
import sys
from pathlib import Path

path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results" / "peers.jsonl"


def pair(block):
    if not block:
        return "—"
    a = block["avgL1"]
    return f"{a:.3f} / {block['max']:.4f}" if a >= 0.1 else f"{a:.4f} / {block['max']:.4f}"


def workload(r):
    w = r["workload"]
    if w.endswith(".json"):
        return Path(w).stem
    return f"{w} (seed {r['workload_seed']})" if r.get("workload_seed") is not None else w


print("| table | workload | ε | mech | seed | model avgL1 / max | synthetic (package sampler) avgL1 / max "
      "| synthetic (i.i.d. from model) avgL1 / max | fit s | total s | peak MiB | status |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for line in path.read_text().splitlines():
    if not line.strip():
        continue
    r = json.loads(line)
    ok = r.get("status") == "ok"
    print(
        f"| {r['table']} | {workload(r)} | {r['epsilon']:g} | {r['mechanism'].upper()} | {r['seed']} "
        f"| {pair(r.get('model_marginals')) if ok else '—'} | {pair(r.get('synthetic')) if ok else '—'} "
        f"| {pair(r.get('synthetic_iid')) if ok else '—'} "
        f"| {r['seconds']:.0f} | {r['seconds_total']:.0f} | {r['peak_rss_mib']:.0f} | ok |"
        if ok
        else f"| {r['table']} | {workload(r)} | {r['epsilon']:g} | {r['mechanism'].upper()} | {r['seed']} "
        f"| — | — | — | — | {(format(r['seconds_total'], '.0f') if r.get('seconds_total') else '—')} | — | {r['status']} |"
    )
