"""``dpqr.plan`` is ``dpqr release --dry-run``: the same lines as the command line prints
(but for the files that are temporary copies in Python), typed fields that agree with them,
the same refusals, and no value of the data read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import dpqr
from conftest import (
    ADULT_CSV, ADULT_DOMAIN, ADULT_W64, SURVEY_CSV, SURVEY_SCHEMA, cli_error, run_cli,
)


def cli_dry_run(cli: Path, tmp_path: Path, args: list, labelled: bool = True) -> list:
    """The lines ``dpqr release ARGS --dry-run`` prints on stdout (with ``--answers-form
    labelled``, as Python asks for central releases, when ``labelled``)."""
    form = ["--answers-form", "labelled"] if labelled else []
    result = run_cli(
        cli,
        ["release", *args, "--dry-run", "--quiet", *form,
         "--out", str(tmp_path / "a.csv"), "--report", str(tmp_path / "r.json")],
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def without_outputs(lines: list) -> list:
    """The lines but the one naming the outputs, which are temporary files in Python."""
    return [line for line in lines if not line.startswith("outputs: ")]


@pytest.mark.parametrize(
    "kwargs,flags",
    [
        (dict(mechanism="gaussian", rho=0.1, workload="all-2way", assume_n=30000),
         ["--mechanism", "gaussian", "--rho", "0.1", "--workload", "all-2way",
          "--assume-n", "30000"]),
        (dict(mechanism="laplace", epsilon=1.0, workload="all-2way",
              neighbouring="replace-one"),
         ["--mechanism", "laplace", "--epsilon", "1", "--workload", "all-2way",
          "--neighbouring", "replace-one"]),
        (dict(mechanism="mwem", epsilon=1.0, workload="all-2way", assume_n=1000),
         ["--mechanism", "mwem", "--epsilon", "1", "--workload", "all-2way",
          "--assume-n", "1000"]),
        (dict(mechanism="auto", rho=1.0, workload="all-2way"),
         ["--mechanism", "auto", "--rho", "1", "--workload", "all-2way"]),
    ],
)
def test_the_lines_are_the_clis(cli, kwargs, flags, tmp_path):
    expected = cli_dry_run(
        cli, tmp_path, ["--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), *flags]
    )
    p = dpqr.plan(str(ADULT_CSV), schema=str(ADULT_DOMAIN), synthetic=False, **kwargs)
    assert without_outputs(p.lines) == without_outputs(expected)
    assert p.lines[-1] == "outputs: the answers, the report (checked writable)"
    assert str(p) == "\n".join(p.lines)


def test_adaptive_projection_on_adult_w64_from_a_frame(cli, adult, adult_schema, tmp_path):
    """The issue's example, planned: the noise schedule as fields and as the CLI's lines."""
    expected = cli_dry_run(
        cli,
        tmp_path,
        ["--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), "--workload", str(ADULT_W64),
         "--mechanism", "adaptive-projection", "--epsilon", "1", "--delta", "1e-9",
         "--synthetic-out", str(tmp_path / "s.csv")],
    )
    p = dpqr.plan(adult, schema=adult_schema, workload=str(ADULT_W64),
                  mechanism="adaptive-projection", epsilon=1.0, delta=1e-9)
    # the frame is a temporary file in Python: its line names it as given
    assert p.lines[1].startswith("data: the DataFrame exists and its header fits the schema")
    assert [l.replace(str(ADULT_CSV), "the DataFrame") for l in without_outputs(expected)] == (
        without_outputs(p.lines)
    )
    assert p.certificate.guarantee == "zcdp"
    assert p.certificate.approx_equivalent == (1.0, 1e-9)
    assert p.certificate.statement in p.lines[2]
    assert p.synthetic
    schedule = p.prediction
    assert schedule["kind"] == "schedule"
    assert p.count_std == schedule["round"]["measurement"]["sigma"]
    # the σ printed is the field's, to the six places printed
    line = next(l for l in p.lines if l.startswith("  a round before annealing"))
    assert f"σ = {p.count_std:.6f}" in line
    assert schedule["attributes"] == 14 and p.touched_attributes == 14
    # at a low budget T = 12d: the other 1-way tables and the rounds at ρ·(0.9/168) each
    low = schedule["low_budget"]
    assert low["nominal_rounds"] == 12 * 14
    assert low["round"]["measurement"] == low["one_way"]
    assert abs(low["one_way"]["rho"] - 0.9 * schedule["rho"] / 168) < 1e-12 * schedule["rho"]
    assert p.queries == 2_492_287
    assert p.checks_pass and p.checks_refusal is None


def test_the_count_noise_fields_agree_with_the_lines():
    p = dpqr.plan(str(ADULT_CSV), schema=str(ADULT_DOMAIN), workload="all-3way",
                  mechanism="gaussian", rho=0.01, assume_n=1000)
    assert p.prediction["kind"] == "count-noise"
    assert f"standard deviation {p.count_std:.4f} (exact)" in "\n".join(p.lines)
    assert p.prediction["answer_std"] == pytest.approx(p.count_std / 1000)
    # gaussian's noise on adult's 3-way tables swamps them: the release's warning, planned
    assert p.prediction["table_l1"] > 2
    assert any(l.startswith("WARNING: the noise alone") for l in p.lines)
    assert p.memory_bytes == 32 * p.queries and p.memory_refused is False
    assert p.universe_log10 is None


def test_no_value_of_the_data_is_read():
    """A frame whose every value the schema refuses plans (only its columns are handed
    over) and fails to release."""
    columns = json.loads(SURVEY_SCHEMA.read_text()).keys()
    bad = pd.DataFrame({c: ["not a value"] * 3 for c in columns})
    p = dpqr.plan(bad, schema=str(SURVEY_SCHEMA), workload="all-2way", mechanism="gaussian",
                  rho=1.0)
    assert p.lines[0].startswith("dry run: no data read")
    with pytest.raises(dpqr.DpqrError):
        dpqr.release(bad, schema=str(SURVEY_SCHEMA), workload="all-2way", mechanism="gaussian",
                     rho=1.0)


def test_a_refused_universe_is_planned_and_a_bad_budget_raises_the_clis_message(cli, tmp_path):
    p = dpqr.plan(str(ADULT_CSV), schema=str(ADULT_DOMAIN), workload="all-2way",
                  mechanism="mwem", epsilon=1.0)
    assert p.checks_pass is False
    assert "explicit universe is too large" in p.checks_refusal
    assert p.universe_log10 == pytest.approx(17.8, abs=0.05)
    result = run_cli(
        cli,
        ["release", "--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), "--workload",
         "all-2way", "--mechanism", "gaussian", "--epsilon", "-1", "--delta", "1e-9",
         "--dry-run", "--out", str(tmp_path / "a.csv")],
    )
    with pytest.raises(dpqr.DpqrError) as e:
        dpqr.plan(str(ADULT_CSV), schema=str(ADULT_DOMAIN), workload="all-2way",
                  mechanism="gaussian", epsilon=-1.0, delta=1e-9)
    assert str(e.value) == cli_error(result)
    with pytest.raises(dpqr.DpqrError, match=re.escape("assume_n=0: give a whole number")):
        dpqr.plan(str(ADULT_CSV), schema=str(ADULT_DOMAIN), workload="all-2way",
                  mechanism="gaussian", rho=1.0, assume_n=0)


def test_a_local_mechanism_plans_its_guarantee_and_workload(cli, tmp_path):
    expected = cli_dry_run(
        cli, tmp_path,
        ["--data", str(SURVEY_CSV), "--domain", str(SURVEY_SCHEMA), "--workload", "all-2way",
         "--mechanism", "local-projection", "--epsilon", "1"],
        labelled=False,
    )
    p = dpqr.plan(str(SURVEY_CSV), schema=str(SURVEY_SCHEMA), workload="all-2way",
                  mechanism="local-projection", epsilon=1.0)
    assert p.lines == expected
    assert p.certificate.model == "local" and p.prediction is None
