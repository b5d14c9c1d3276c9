#!/usr/bin/env bash
# The Python package's CI step: clippy of the PyO3 module, the extension built by maturin into a
# virtual environment under the Cargo target directory (never in the repository), and the pytest
# suite, which compares releases from Python with the `dpqr` command line's.
#
#   python/ci.sh                         # from anywhere in the repository
#   DPQR_CLI=target/debug/dpqr python/ci.sh   # reuse a dpqr binary (.ci/run: the test step's)
#   DPQR_SKIP_CLIPPY=1 python/ci.sh           # the workspace's clippy ran with
#                                             # --features dpqr-python/python already
#
# Cargo's target directory is the workspace's (`$CARGO_TARGET_DIR`, or `target/`), shared with
# the other builds; the extension is built in the release profile, as `cargo xtask bench` builds
# its dependencies. Needs CPython 3.9 or later (`$PYTHON`, default python3) with venv, and PyPI
# for maturin, pytest, pandas, polars, pyarrow and tqdm (installed once into the environment).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/python-venv
python=${PYTHON:-python3}

echo "== python: virtual environment $venv"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.9.4,<2" pytest pandas polars pyarrow tqdm

if [ "${DPQR_SKIP_CLIPPY:-0}" != 1 ]; then
  # its own check of the dependencies: PyO3's macros turn on syn features the workspace's
  # clippy does not (about 3 min on 2 cores; DPQR_SKIP_CLIPPY=1 when that clippy has it)
  echo "== python: clippy of the module (feature python)"
  cargo clippy -p dpqr-python --features python -- -D warnings
fi

echo "== python: the extension (maturin develop --release)"
(
  cd python
  VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH CARGO_TARGET_DIR=$target \
    "$venv/bin/maturin" develop --release --quiet
)

if [ -z "${DPQR_CLI:-}" ]; then
  echo "== python: the dpqr command line the tests compare with"
  # the test profile's binary, as `cargo test` builds it
  cargo build --profile test -p dp-bench --bin dpqr
  DPQR_CLI=$target/debug/dpqr
fi

echo "== python: pytest (python/tests)"
DPQR_CLI=$(cd "$(dirname "$DPQR_CLI")" && pwd)/$(basename "$DPQR_CLI") \
  "$venv/bin/python" -m pytest -q python/tests
