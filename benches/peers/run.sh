#!/usr/bin/env bash
# Peer bench (issue #24): AIM and MST from smartnoise-synth with their own defaults, on the
# bundled tables, scored by dpqr's own scorer. Not run by CI. See benches/peers/README.md.
#
#   benches/peers/run.sh setup                    make the venv only
#   benches/peers/run.sh one TABLE WORKLOAD WSEED MECH EPS SEED
#                                                 one run (WORKLOAD: random-3way:64, all-2way,
#                                                 data/workloads/adult_w64.json, ...)
#   benches/peers/run.sh plan [N]                 the default plan (issue #24's priority order);
#                                                 N: only its first N runs; runs RESULTS holds
#                                                 with status "ok" are skipped
#
# Environment: DPQR_PEERS_VENV (default $HOME/.cache/dpqr-peers/venv, outside the repo),
# DPQR_BIN (default target/release/dpqr; built by you with `cargo build --release --bin dpqr`),
# DPQR_PEERS_TIMEOUT (wall-clock cap per run, seconds, default 3600),
# DPQR_PEERS_CPU (the one CPU the runs are pinned to with taskset, default 0),
# DPQR_PEERS_RESULTS (default benches/peers/results/peers.jsonl),
# DPQR_PEERS_STOP (default $HOME/.cache/dpqr-peers/stop: while that file exists, `plan`
# starts no further run; the run under way finishes and is recorded).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${DPQR_PEERS_VENV:-$HOME/.cache/dpqr-peers/venv}"
DPQR_BIN="${DPQR_BIN:-$REPO/target/release/dpqr}"
TIMEOUT="${DPQR_PEERS_TIMEOUT:-3600}"
CPU="${DPQR_PEERS_CPU:-0}"
RESULTS="${DPQR_PEERS_RESULTS:-$HERE/results/peers.jsonl}"
STOP="${DPQR_PEERS_STOP:-$HOME/.cache/dpqr-peers/stop}"
SNSYNTH_VERSION="1.0.8"

case "$VENV" in
  "$REPO"/*) echo "run.sh: DPQR_PEERS_VENV must be outside the repository ($REPO)" >&2; exit 2 ;;
esac

# one core: single-threaded BLAS/OpenMP and XLA, and pinned to one CPU
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
export JAX_PLATFORMS=cpu
export PYTHONHASHSEED=0

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
  fi
  if ! "$VENV/bin/python" -c "import snsynth, mbi" 2>/dev/null \
     || [ "$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("smartnoise-synth"))')" != "$SNSYNTH_VERSION" ]; then
    "$VENV/bin/pip" install --quiet -r "$HERE/requirements.txt"
    "$VENV/bin/pip" install --quiet --no-deps "smartnoise-synth==$SNSYNTH_VERSION"
  fi
}

one() {
  local table="$1" workload="$2" wseed="$3" mech="$4" eps="$5" seed="$6"
  [ -x "$DPQR_BIN" ] || { echo "run.sh: no dpqr binary at $DPQR_BIN (cargo build --release --bin dpqr)" >&2; exit 2; }
  local args=(--table "$table" --workload "$workload" --workload-seed "$wseed" --mechanism "$mech"
              --epsilon "$eps" --delta 1e-9 --seed "$seed" --dpqr "$DPQR_BIN" --results "$RESULTS")
  echo "== $(date -u +%FT%TZ) $mech $table $workload (workload seed $wseed) eps=$eps seed=$seed" >&2
  local start rc=0
  start=$(date +%s)
  (cd "$REPO" && timeout --kill-after=30 "$TIMEOUT" taskset -c "$CPU" "$VENV/bin/python" "$HERE/peers.py" "${args[@]}") || rc=$?
  local wall=$(( $(date +%s) - start ))
  if [ "$rc" -ne 0 ]; then
    local status="failed (exit $rc) after ${wall} s"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status="timeout after ${TIMEOUT} s"; fi
    "$VENV/bin/python" "$HERE/peers.py" "${args[@]}" --record-failure "$status" --wall-seconds "$wall"
    echo "== $status" >&2
  else
    echo "== done in ${wall} s" >&2
  fi
}

plan() {
  # issue #24's priority order: MST everywhere; AIM at eps=1; then the cheap tables' missing
  # rows (titanic, nltcs: minutes each) before the long ones (acs, adult: 25-60 min each)
  local W64=data/workloads/adult_w64.json A2=data/workloads/adult_all2.json
  cat <<PLAN
mst titanic random-3way:64 1 1 1
mst nltcs random-3way:64 1 1 1
mst acs random-3way:64 1 1 1
mst adult random-3way:64 1 1 1
mst temporal-match2 random-3way:64 1 1 1
aim titanic random-3way:64 1 1 1
aim nltcs random-3way:64 1 1 1
aim acs random-3way:64 1 1 1
aim adult $W64 1 1 1
aim titanic random-3way:64 1 10 1
aim titanic random-3way:64 1 0.1 1
aim titanic all-2way 1 1 1
aim titanic all-2way 1 10 1
aim titanic all-2way 1 0.1 1
aim titanic random-3way:64 1 1 2
aim titanic random-3way:64 1 1 3
aim nltcs all-2way 1 1 1
aim nltcs random-3way:64 1 10 1
aim nltcs random-3way:64 1 0.1 1
aim acs random-3way:64 1 10 1
aim adult $W64 1 10 1
aim adult $W64 1 0.1 1
aim acs all-2way 1 1 1
aim adult $A2 1 1 1
aim temporal-match2 random-3way:64 1 1 1
mst adult $W64 1 1 1
mst adult $A2 1 1 1
aim titanic random-3way:64 2 1 1
aim nltcs random-3way:64 2 1 1
PLAN
}

# true when RESULTS already holds a successful record of this run (`plan` skips it, so a plan
# stopped part-way resumes where it stopped)
recorded() {
  local mech="$1" table="$2" workload="$3" wseed="$4" eps="$5" seed="$6"
  [ -f "$RESULTS" ] || return 1
  python3 - "$RESULTS" "$mech" "$table" "$workload" "$wseed" "$eps" "$seed" <<'PY'
import json, sys
path, mech, table, workload, wseed, eps, seed = sys.argv[1:]
for line in open(path):
    r = json.loads(line)
    same_workload = r["workload"] == workload and (
        not workload.startswith("random-") or r.get("workload_seed") == int(wseed))
    if (r.get("status") == "ok" and same_workload and r["mechanism"] == mech
            and r["table"] == table and r["epsilon"] == float(eps) and r["seed"] == int(seed)):
        sys.exit(0)
sys.exit(1)
PY
}

cmd="${1:-plan}"
case "$cmd" in
  setup) setup ;;
  one) shift; setup; one "$@" ;;
  plan)
    setup
    limit="${2:-1000}"
    i=0
    while read -r mech table workload wseed eps seed; do
      i=$((i + 1)); [ "$i" -le "$limit" ] || break
      if [ -e "$STOP" ]; then echo "run.sh: $STOP exists: stopping before run $i" >&2; break; fi
      if recorded "$mech" "$table" "$workload" "$wseed" "$eps" "$seed"; then
        echo "== run $i ($mech $table $workload $eps seed $seed): recorded already, skipped" >&2; continue
      fi
      one "$table" "$workload" "$wseed" "$mech" "$eps" "$seed" </dev/null
    done < <(plan)
    ;;
  *) echo "usage: $0 setup | one TABLE WORKLOAD WSEED MECH EPS SEED | plan [N]" >&2; exit 2 ;;
esac
