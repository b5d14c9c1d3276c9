#!/usr/bin/env python3
"""Peer bench driver (issue #24, item 1): AIM and MST from smartnoise-synth, run with the
library's own defaults on a bundled dpqr table, scored by dpqr's own scorer (`dpqr eval`).

One invocation = one run = one JSON line appended to the results file. Run it through
`benches/peers/run.sh`, which makes the virtual environment (outside the repository), pins
the packages, forces single-threaded numerics and applies the wall-clock cap.

What it does, for (table, workload, workload seed, mechanism, epsilon, delta, seed):

1. Reads `data/<table>/<table>.csv` and `data/<table>/<table>-domain.json` (columns matched
   by name; the domain's key order is the attribute order, as in dpqr). The columns are
   already integer codes, so no transformer runs and no domain is inferred from the data:
   an `mbi.Dataset` is built over the published domain.
2. Expands the workload exactly as dpqr does, by asking dpqr itself: `dpqr eval --synthetic`
   on a one-record file lists the workload's tables (`per_marginal[].attributes`) in dpqr's
   order. This is the only CLI route to a random workload's tables (there is no
   `dpqr workload --dump`); the records scored there are a dummy, the list is all we keep.
3. Fits: AIM through `AIMSynthesizer.AIM(dataset, workload)` — the method `fit()` calls after
   its transformer, here given dpqr's workload (the `fit()` API takes no workload: it would
   build all `degree`-way tables of at most `max_cells` cells itself); MST through
   `MSTSynthesizer.MST(dataset, epsilon, delta)` (MST takes no workload). Every tunable is
   left at the installed version's default; the defaults are read from the installed code and
   recorded.
4. Scores with `dpqr eval --json`: (a) the fitted model's marginals on the workload, written as
   a dpqr answers file (normalised by the model's own total): what dpqr releases; (b) synthetic
   records sampled from the model (as many as the table has), with `--synthetic`. For MST the
   model lives on a compressed domain (rare values merged into one code); its marginals are
   mapped back by spreading a merged code's mass uniformly over the values it merged, which is
   what MST's own `reverse_data` does to synthetic records in expectation.

Nothing here is private output: the scores are computed from the true data (dpqr eval is
non-private). The seed seeds numpy's global generator (the exponential mechanism's choices,
MST's edge choices, the sampling of records); the Gaussian noise comes from OpenDP's sampler,
which cannot be seeded, so two runs with the same seed differ.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import hashlib
import inspect
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, MiB (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_domain(table: str) -> tuple[Path, Path, dict[str, int]]:
    folder = REPO / "data" / table
    csv_path = folder / f"{table}.csv"
    dom_path = folder / f"{table}-domain.json"
    with open(dom_path, encoding="utf-8") as f:
        domain = json.load(f)  # key order preserved: dpqr's attribute order
    return csv_path, dom_path, {k: int(v) for k, v in domain.items()}


def load_columns(csv_path: Path, domain: dict[str, int]):
    """The table as a dict name -> int64 column, matched by name, range-checked against the
    published domain (never widened from the data)."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(csv_path, dtype="int64")
    missing = [a for a in domain if a not in df.columns]
    if missing:
        raise SystemExit(f"{csv_path}: columns {missing} of the domain are missing")
    cols = {}
    for a, size in domain.items():
        x = df[a].to_numpy(dtype=np.int64)
        if x.size and (x.min() < 0 or x.max() >= size):
            raise SystemExit(f"{csv_path}: column {a!r} has codes outside [0, {size})")
        cols[a] = x
    return cols, len(df)


def escape_name(name: str) -> str:
    """dpqr's answers-file table label escaping: `|` and `\\` inside a name get a `\\`."""
    return name.replace("\\", "\\\\").replace("|", "\\|")


def dpqr_eval(dpqr: str, csv_path: Path, dom_path: Path, extra: list[str]) -> dict:
    cmd = [dpqr, "eval", "--data", str(csv_path), "--domain", str(dom_path), "--json", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def expand_workload(dpqr, csv_path, dom_path, domain, spec, wseed, tmp: Path):
    """dpqr's own expansion of `spec` (all-Kway, random-Kway:M with --workload-seed, or a JSON
    file): the table list of `dpqr eval` on a one-record synthetic file."""
    one = tmp / "one-record.csv"
    with open(one, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(list(domain) + ["weight"])
        w.writerow([0] * len(domain) + [1])
    extra = ["--synthetic", str(one), "--workload", spec, "--workload-seed", str(wseed)]
    r = dpqr_eval(dpqr, csv_path, dom_path, extra)
    return [tuple(t["attributes"]) for t in r["per_marginal"]]


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def hardcoded(source: str, pattern: str) -> list[str]:
    return sorted(set(re.findall(pattern, source)))


def aim_defaults(cls, d: int) -> dict:
    sig = inspect.signature(cls.__init__)
    src = inspect.getsource(cls)
    out = {
        k: v.default
        for k, v in sig.parameters.items()
        if k not in ("self", "epsilon", "delta", "verbose") and v.default is not inspect.Parameter.empty
    }
    rounds = out.get("rounds")
    out["rounds_resolved"] = rounds if rounds is not None else 16 * d
    out["rounds_rule"] = "rounds or 16 * len(domain)" if "16 * len(data.domain)" in src else "see source"
    out["mirror_descent_iters"] = hardcoded(src, r"iters=(\d+)")
    out["marginal_oracle"] = hardcoded(src, r"marginal_oracle=marginal_oracles\.(\w+)")
    out["unused_here"] = (
        "degree, max_cells and num_marginals only build fit()'s own workload; "
        "this driver passes dpqr's workload to AIM() instead"
    )
    return out


def mst_defaults(cls) -> dict:
    src = inspect.getsource(cls)
    return {
        "mirror_descent_iters": hardcoded(src, r"iters=(\d+)"),
        "marginal_oracle": hardcoded(src, r"marginal_oracle=marginal_oracles\.(\w+)"),
        "budget": "rho/3 one-way, rho/3 tree selection, rho/3 tree edges (source)",
        "workload": "none (MST picks a spanning tree of 2-way tables)",
    }


def factor_array(factor, attrs):
    """The factor's values as a numpy array with axes in the order `attrs`."""
    import numpy as np

    have = list(factor.domain.attrs)
    vals = np.asarray(factor.datavector(flatten=False), dtype=np.float64)
    return np.transpose(vals, [have.index(a) for a in attrs])


def mst_expanders(synth, compressed_domain, domain):
    """Per attribute, the matrix (original size x compressed size) mapping MST's compressed
    codes back to the published domain: a kept value to itself, the merged code uniformly over
    the values it merged (what MST's reverse_data does to records, in expectation). The
    supports live in the closure of `undo_compress_fn` (the installed MST keeps no attribute)."""
    import numpy as np

    fn = synth.undo_compress_fn
    supports = None
    for cell in fn.__closure__ or ():
        v = cell.cell_contents
        if isinstance(v, dict) and set(v) == set(domain):
            supports = v
    if supports is None:
        raise RuntimeError("MST's compression supports are not reachable in this version")
    mats = {}
    for a, size in domain.items():
        sup = np.asarray(supports[a], dtype=bool)
        kept = np.flatnonzero(sup)
        merged = np.flatnonzero(~sup)
        csize = compressed_domain[a]
        m = np.zeros((size, csize))
        m[kept, np.arange(kept.size)] = 1.0
        if merged.size:
            m[merged, kept.size] = 1.0 / merged.size
        mats[a] = m
    return mats


def model_marginal(mech, model, attrs, expanders):
    import numpy as np

    arr = factor_array(model.project(list(attrs)), attrs)
    if expanders is not None:  # MST: back from the compressed domain
        for axis, a in enumerate(attrs):
            arr = np.moveaxis(np.tensordot(expanders[a], arr, axes=([1], [axis])), 0, axis)
    arr = np.clip(arr, 0.0, None)
    total = arr.sum()
    if not np.isfinite(total) or total <= 0:
        return np.full(arr.shape, 1.0 / arr.size)
    return arr / total


def sample_iid(model, rows: int, seed: int):
    """`rows` records drawn i.i.d. from the fitted model, by this driver's own forward sampler
    over a junction tree of the model: attributes in reverse elimination order, each drawn from
    its conditional given the already-drawn attributes it shares a junction-tree clique with
    (for a perfect elimination order those form one clique, so the conditional is exact).

    Why it exists: the installed mbi 1.1.0's `MarkovRandomField.synthetic_data()` (what
    smartnoise-synth's `sample()` calls) conditions on the model's measurement cliques instead
    of the junction tree's, and its default randomized rounding gives records the same rank
    order within every parent group, which correlates conditionally independent columns.
    Both are fixed upstream (ryan112358/mbi pull request #145, in mbi 2.0.0, which
    smartnoise-synth 1.0.8's `mbi<2` excludes). Its records are scored as the package makes
    them, and these beside them, so the model and the package's sampler can be told apart."""
    import numpy as np
    from mbi import Dataset, junction_tree, marginal_oracles

    rng = np.random.default_rng(seed)
    domain = model.domain
    jtree, order = junction_tree.make_junction_tree(domain, [tuple(c) for c in model.cliques])
    nodes = [tuple(c) for c in jtree.nodes]
    margs = marginal_oracles.message_passing_stable(model.potentials.expand(nodes))
    drawn: dict[str, np.ndarray] = {}
    for col in reversed(list(order)):
        best = max((c for c in nodes if col in c), key=lambda c: len(set(c) & set(drawn)))
        parents = tuple(a for a in best if a in drawn)
        arr = np.clip(factor_array(margs.project(parents + (col,)), parents + (col,)), 0.0, None)
        k = arr.shape[-1]
        table = arr.reshape(-1, k)
        mass = table.sum(axis=1, keepdims=True)
        cond = np.where(mass > 0, table / np.where(mass > 0, mass, 1.0), 1.0 / k)
        cdf = np.cumsum(cond, axis=1)
        cdf[:, -1] = 1.0
        if parents:
            row = np.ravel_multi_index(tuple(drawn[p] for p in parents), arr.shape[:-1])
        else:
            row = np.zeros(rows, dtype=np.int64)
        keys = (np.arange(table.shape[0])[:, None] + cdf).ravel()
        pos = np.searchsorted(keys, row + rng.random(rows), side="right")
        drawn[col] = np.minimum(pos - row * k, k - 1).astype(np.int64)
    return Dataset({a: drawn[a] for a in domain.attrs}, domain)


def write_answers(path: Path, workload, marginals):
    """A dpqr answers file: marginal,cell,answer; cells in row-major order (last attribute
    fastest), codes joined by `|`, answers normalised."""
    import numpy as np

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["marginal", "cell", "answer"])
        for attrs, arr in zip(workload, marginals):
            label = "|".join(escape_name(a) for a in attrs)
            idx = np.indices(arr.shape).reshape(len(attrs), -1).T
            flat = arr.reshape(-1)
            w.writerows(
                (label, "|".join(map(str, cell)), repr(float(v))) for cell, v in zip(idx.tolist(), flat.tolist())
            )


def write_synthetic(path: Path, data, domain):
    import numpy as np
    import pandas as pd

    df = data.df
    out = pd.DataFrame({a: np.asarray(df[a], dtype=np.int64) for a in domain})
    out["weight"] = 1
    out.to_csv(path, index=False)


def summary(r: dict) -> dict:
    return {
        "avgL1": r["mean_marginal_l1"],
        "max": r["max_abs"],
        "rmse": r["rmse"],
        "mean_abs": r["mean_abs"],
        "uniform_avgL1": r["baselines"]["uniform"]["mean_marginal_l1"],
    }


def base_record(a) -> dict:
    return {
        "table": a.table,
        "workload": a.workload,
        "workload_seed": a.workload_seed if a.workload.startswith("random-") else None,
        "mechanism": a.mechanism,
        "epsilon": a.epsilon,
        "delta": a.delta,
        "seed": a.seed,
        "neighbouring": "add/remove (Gaussian noise on counts, L2 sensitivity 1; n not released by the mechanism)",
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": {"python": platform.python_version(), "cpus_allowed": len(os.sched_getaffinity(0))},
        "packages": {
            p: installed(p) for p in ("smartnoise-synth", "mbi", "jax", "jaxlib", "numpy", "scipy", "opendp", "networkx")
        },
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")},
    }


def append(path: Path, rec: dict):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec, sort_keys=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", required=True)
    ap.add_argument("--workload", required=True, help="all-Kway | random-Kway:M | data/workloads/FILE.json")
    ap.add_argument("--workload-seed", type=int, default=1)
    ap.add_argument("--mechanism", choices=["aim", "mst"], required=True)
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dpqr", required=True, help="the dpqr binary used as the scorer")
    ap.add_argument("--results", default=str(REPO / "benches/peers/results/peers.jsonl"))
    ap.add_argument("--record-failure", metavar="STATUS",
                    help="only append a record of a run that did not finish (e.g. 'timeout after 3600 s')")
    ap.add_argument("--wall-seconds", type=float, help="with --record-failure: the wall time it ran")
    a = ap.parse_args()

    results = Path(a.results)
    rec = base_record(a)
    with open(a.dpqr, "rb") as f:
        rec["scorer"] = {"binary": a.dpqr, "sha256": hashlib.sha256(f.read()).hexdigest()[:16]}
    if a.record_failure:
        rec["status"] = a.record_failure
        rec["seconds_total"] = a.wall_seconds
        append(results, rec)
        return

    import numpy as np
    from mbi import Dataset, Domain

    csv_path, dom_path, domain = load_domain(a.table)
    wl_arg = a.workload
    if wl_arg.endswith(".json") and not os.path.isabs(wl_arg):
        wl_arg = str(REPO / wl_arg)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpqr-peers-") as tmpd:
        tmp = Path(tmpd)
        workload = expand_workload(a.dpqr, csv_path, dom_path, domain, wl_arg, a.workload_seed, tmp)
        cols, n = load_columns(csv_path, domain)
        mdom = Domain(list(domain), [domain[k] for k in domain])
        data = Dataset(cols, mdom)
        rec["n"] = n
        rec["d"] = len(domain)
        rec["workload_tables"] = len(workload)
        rec["workload_cells"] = int(sum(int(np.prod([domain[x] for x in t])) for t in workload))

        np.random.seed(a.seed)
        if a.mechanism == "aim":
            from snsynth.aim import AIMSynthesizer
            from snsynth.utils import cdp_rho

            synth = AIMSynthesizer(epsilon=a.epsilon, delta=a.delta)
            rec["defaults"] = aim_defaults(AIMSynthesizer, len(domain))
            rec["workload_given_to_mechanism"] = "dpqr's workload tables, as AIM(data, workload) cliques"
            t0 = time.perf_counter()
            # fit() sets these two before calling AIM(); everything else is the default
            synth.num_rows = n
            synth.rho = 0.0 if synth.delta == 0.0 else cdp_rho(synth.epsilon, synth.delta)
            synth.AIM(data, list(workload))
            fit_s = time.perf_counter() - t0
            model = synth.synthesizer
            rec["rho"] = synth.rho
            rec["model_cliques"] = len(model.cliques)
            rec["model_cells"] = int(sum(int(np.prod([domain[x] for x in cl])) for cl in model.cliques))
            expanders = None
            t1 = time.perf_counter()
            syn = model.synthetic_data(rows=n)  # what AIMSynthesizer.sample() does
            sample_s = time.perf_counter() - t1
            syn_iid = sample_iid(model, n, a.seed)
        else:
            from snsynth.mst import MSTSynthesizer

            synth = MSTSynthesizer(epsilon=a.epsilon, delta=a.delta)
            rec["defaults"] = mst_defaults(MSTSynthesizer)
            rec["workload_given_to_mechanism"] = "none (MST takes no workload)"
            t0 = time.perf_counter()
            synth.num_rows = n
            synth.MST(data, synth.epsilon, synth.delta)
            fit_s = time.perf_counter() - t0
            model = synth.synthesizer
            rec["model_cliques"] = len(model.cliques)
            cdom = {k: int(v) for k, v in zip(model.domain.attrs, model.domain.shape)}
            rec["model_cells"] = int(sum(int(np.prod([cdom[x] for x in cl])) for cl in model.cliques))
            expanders = mst_expanders(synth, cdom, domain)
            t1 = time.perf_counter()
            syn = synth.undo_compress_fn(model.synthetic_data(rows=n))  # as MSTSynthesizer.sample()
            sample_s = time.perf_counter() - t1
            syn_iid = synth.undo_compress_fn(sample_iid(model, n, a.seed))
        rec["seconds"] = round(fit_s, 2)
        rec["seconds_sample"] = round(sample_s, 2)
        rec["peak_rss_mib_fit"] = round(peak_rss_mib(), 1)

        # (a) the model's marginals, as a dpqr answers file
        t2 = time.perf_counter()
        margs = [model_marginal(a.mechanism, model, t, expanders) for t in workload]
        ans = tmp / "answers.csv"
        write_answers(ans, workload, margs)
        del margs
        rec["model_marginals"] = summary(dpqr_eval(a.dpqr, csv_path, dom_path, ["--answers", str(ans)]))
        if a.mechanism == "mst":
            rec["model_marginals"]["note"] = "compressed codes spread uniformly over the values they merged"
        # (b) the synthetic records
        syn_path = tmp / "synthetic.csv"

        def score_records(records, sampler):
            write_synthetic(syn_path, records, domain)
            out = summary(
                dpqr_eval(a.dpqr, csv_path, dom_path,
                          ["--synthetic", str(syn_path), "--workload", wl_arg,
                           "--workload-seed", str(a.workload_seed)])
            )
            out["rows"] = n
            out["sampler"] = sampler
            return out

        rec["synthetic"] = score_records(
            syn, "the package's: mbi MarkovRandomField.synthetic_data(rows=n), default method")
        rec["synthetic_iid"] = score_records(
            syn_iid, "this driver's junction-tree forward sampler (sample_iid), i.i.d.")
        rec["seconds_scoring"] = round(time.perf_counter() - t2, 2)
    rec["seconds_total"] = round(time.perf_counter() - t_start, 2)
    rec["peak_rss_mib"] = round(peak_rss_mib(), 1)
    rec["status"] = "ok"
    append(results, rec)
    print(json.dumps({k: rec[k] for k in ("table", "workload", "mechanism", "epsilon", "seconds",
                                          "peak_rss_mib", "model_marginals", "synthetic", "synthetic_iid")}), file=sys.stderr)


if __name__ == "__main__":
    main()
