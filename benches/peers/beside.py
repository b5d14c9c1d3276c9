#!/usr/bin/env python3
"""adaptive-projection and the Gaussian baseline (the real-tables grid) beside AIM with its
own defaults (the peer bench), one row per (table, workload, ε) that both measured, with
issue #24's targets checked on every row.

    python3 benches/peers/beside.py GRID.jsonl [GRID.jsonl ...] [--peers RESULTS.jsonl] [--all]

`--all`: every (table, workload, ε) of the grid, with AIM's failed or missing runs named
(e.g. "timeout after 3600 s", "not run") and a column saying whether the release is ahead of
the Gaussian baseline in avgL1.

GRID files are `cargo xtask bench --only real-tables-peers` records (a later file's rows
replace an earlier file's for the same table, workload, ε and seed: pass the full grid first
and a re-run subset after it). Standard library only.

Targets (issue #24): avgL1 ≤ 0.9 × AIM's; max ≤ the Gaussian baseline's; seconds ≤ AIM's / 10.
Means over the seeds each side has; dpqr's seconds are its mean wall time on 2 cores, AIM's
the fit time on one core (benches/peers/README.md).
"""

import json
import sys
from pathlib import Path
from statistics import mean

args = sys.argv[1:]
peers = Path(__file__).parent / "results" / "peers.jsonl"
if "--peers" in args:
    i = args.index("--peers")
    peers = Path(args[i + 1])
    del args[i : i + 2]
show_all = "--all" in args
if show_all:
    args.remove("--all")
if not args:
    sys.exit(__doc__)


def wl_key(name, wseed):
    if name.endswith(".json"):
        return Path(name).stem
    return f"{name} (seed {wseed})" if name.startswith("random-") else name


grid = {}
for f in args:
    for line in Path(f).read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        c = r["config"]
        w = c["workload"]
        if "File" in w:
            wk = Path(w["File"]).stem
        else:
            spec, wseed = w["Spec"]
            wk = wl_key(spec, wseed)
        key = (c["dataset"], wk, float(c["epsilon"]), c["mechanism"], c["seed"])
        grid[key] = (r["error"]["mean_marginal_l1"], r["error"]["max_abs"], r["seconds"])

aim = {}
aim_failed = {}
for line in peers.read_text().splitlines():
    if not line.strip():
        continue
    r = json.loads(line)
    if r["mechanism"] != "aim":
        continue
    wk = wl_key(r["workload"], r.get("workload_seed"))
    if r.get("status") != "ok":
        aim_failed.setdefault((r["table"], wk, float(r["epsilon"])), r.get("status", "failed"))
        continue
    m = r["model_marginals"]
    aim.setdefault((r["table"], wk, float(r["epsilon"])), []).append(
        (m["avgL1"], m["max"], r["seconds"])
    )


def fmt(x):
    return f"{x:.3f}" if x >= 0.1 else (f"{x:.4f}" if x >= 0.001 else f"{x:.5f}")


extra = " avgL1 ahead of baseline's |" if show_all else ""
print(
    "| table | workload | ε | adaptive avgL1 / max / s (seeds) | Gaussian+simplex avgL1 / max "
    "| AIM-defaults avgL1 / max / fit s (seeds) | avgL1 ÷ AIM's (≤ 0.9) | max ≤ baseline's "
    "| s ≤ AIM's / 10 |" + extra
)
print("|---|---|---|---|---|---|---|---|---|" + ("---|" if show_all else ""))
# the grid's runs by (table, workload, ε, mechanism), over the seeds
by_mech = {}
for k, v in grid.items():
    by_mech.setdefault(k[:4], []).append(v)
rows = set(aim)
if show_all:
    rows |= {k[:3] for k in grid}
for table, wk, eps in sorted(rows):
    ours = by_mech.get((table, wk, eps, "adaptive-projection"), [])
    base = by_mech.get((table, wk, eps, "gaussian"), [])
    if not ours or not base:
        continue
    a = [mean(x[i] for x in ours) for i in range(3)]
    b = [mean(x[i] for x in base) for i in range(2)]
    runs = aim.get((table, wk, eps))
    ahead = f" {'yes' if a[0] < b[0] else '**no**'} |" if show_all else ""
    head = (
        f"| {table} | {wk} | {eps:g} | {fmt(a[0])} / {fmt(a[1])} / {a[2]:.1f} ({len(ours)}) "
        f"| {fmt(b[0])} / {fmt(b[1])} "
    )
    max_ok = "yes" if a[1] <= b[1] else "**no**"
    if not runs:
        # the first clause of a failure's status ("timeout after 3600 s", "no result")
        status = aim_failed.get((table, wk, eps), "not run").split(":")[0]
        print(f"{head}| — ({status}) | — | {max_ok} | — |{ahead}")
        continue
    p = [mean(x[i] for x in runs) for i in range(3)]
    ratio = a[0] / p[0]
    print(
        f"{head}| {fmt(p[0])} / {fmt(p[1])} / {p[2]:.0f} ({len(runs)}) "
        f"| {ratio:.2f} {'yes' if ratio <= 0.9 else '**no**'} "
        f"| {max_ok} | {'yes' if a[2] <= p[2] / 10 else '**no**'} |{ahead}"
    )
