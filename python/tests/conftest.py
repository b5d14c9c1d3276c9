"""Shared fixtures: the repository's bundled data and the ``dpqr`` command line the package's
releases are compared with.

The command line is ``$DPQR_CLI`` when set (``python/ci.sh`` sets it to the binary built
from the same target directory), otherwise the first ``dpqr`` found under
``$CARGO_TARGET_DIR`` (or ``target/``) in ``release/`` or ``debug/``; without one, the tests
that need it are skipped — unless ``$DPQR_CLI`` names a missing file, which fails them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
ADULT_CSV = REPO / "data" / "adult" / "adult.csv"
ADULT_DOMAIN = REPO / "data" / "adult" / "adult-domain.json"
ADULT_W64 = REPO / "data" / "workloads" / "adult_w64.json"
SURVEY_CSV = REPO / "data" / "examples" / "survey.csv"
SURVEY_SCHEMA = REPO / "data" / "examples" / "survey-schema.json"


def _find_cli() -> Path:
    named = os.environ.get("DPQR_CLI")
    if named:
        path = Path(named)
        if not path.is_file():
            pytest.fail(f"DPQR_CLI={named} is not a file")
        return path
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        path = target / profile / "dpqr"
        if path.is_file():
            return path
    pytest.skip("no dpqr binary found: set DPQR_CLI or build it (cargo build -p dp-bench)")


@pytest.fixture(scope="session")
def cli() -> Path:
    """The ``dpqr`` command line."""
    return _find_cli()


def run_cli(cli: Path, args: List[str]) -> subprocess.CompletedProcess:
    """``dpqr ARGS`` from the repository's root, its output captured as text."""
    return subprocess.run(
        [str(cli), *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def cli_error(result: subprocess.CompletedProcess) -> str:
    """The message of a failed ``dpqr`` run: its stderr from ``error: `` on, without it."""
    assert result.returncode != 0, result.stdout
    text = result.stderr
    start = text.rfind("error: ")
    assert start >= 0, text
    return text[start + len("error: ") :].strip()


def read_answers_file(path: Path) -> pd.DataFrame:
    """An answers CSV of ``dpqr release`` as the tests read it: names and codes as text,
    answers and counts as numbers (an empty count missing)."""
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    numeric = {"answer", "count"}
    return pd.read_csv(
        path,
        dtype={c: str for c in header if c not in numeric},
        keep_default_na=False,
        na_values={c: [""] for c in header if c in numeric},
    )


@pytest.fixture(scope="session")
def adult() -> pd.DataFrame:
    """The bundled adult table (integer codes)."""
    return pd.read_csv(ADULT_CSV)


@pytest.fixture(scope="session")
def adult_schema() -> dict:
    """adult's domain as a dict."""
    return json.loads(ADULT_DOMAIN.read_text())
