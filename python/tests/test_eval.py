"""``dpqr.nonprivate.evaluate`` is ``dpqr eval``: the answers and synthetic frames
``dpqr.release`` returns round-trip through it, and its figures are those ``dpqr eval
--json`` prints for the files the command line wrote with the same seed.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpqr
from conftest import ADULT_CSV, ADULT_DOMAIN, SURVEY_CSV, SURVEY_SCHEMA, run_cli

SURVEY = ["--data", str(SURVEY_CSV), "--domain", str(SURVEY_SCHEMA), "--ignore-extra-columns"]


def cli_files(cli: Path, out: Path, args: list, synthetic: bool = True) -> dict:
    """``dpqr release ARGS`` writing its answers (and synthetic records) into ``out``."""
    files = {"answers": out / "a.csv", "synthetic": out / "s.csv"}
    more = ["--synthetic-out", str(files["synthetic"])] if synthetic else []
    result = run_cli(
        cli,
        ["release", *args, "--quiet", "--answers-form", "labelled",
         "--out", str(files["answers"]), *more],
    )
    assert result.returncode == 0, result.stderr
    return files


def cli_eval(cli: Path, data: list, scored: list) -> dict:
    """What ``dpqr eval --json`` prints."""
    result = run_cli(cli, ["eval", *data, *scored, "--json"])
    assert result.returncode == 0, result.stderr
    assert "NON-PRIVATE EVALUATION" in result.stderr
    return json.loads(result.stdout)


def quiet_release(data, **kwargs) -> dpqr.Release:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpqr.DpqrWarning)
        return dpqr.release(data, **kwargs)


#: The warnings of the last ``evaluate`` call.
said: list = []


def evaluate(released, data, **kwargs) -> dpqr.nonprivate.NonPrivateEvaluation:
    """``evaluate``, checking that it says it is NON-PRIVATE; its warnings kept in ``said``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = dpqr.nonprivate.evaluate(released, data, **kwargs)
    said[:] = [str(w.message) for w in caught if issubclass(w.category, dpqr.DpqrWarning)]
    assert any("NON-PRIVATE EVALUATION" in m for m in said), said
    return e


@pytest.mark.parametrize("rows", [None, 400])
def test_survey_answers_and_synthetic_frames_score_as_the_cli(cli, rows, tmp_path):
    """Labelled answers and synthetic records in the input's form (labels, values within
    bins, empty cells), weighted and as plain rows."""
    more = [] if rows is None else ["--rows", str(rows)]
    files = cli_files(
        cli, tmp_path,
        [*SURVEY, "--workload", "all-2way", "--mechanism", "adaptive-projection",
         "--epsilon", "1", "--delta", "1e-6", "--seed", "11", *more],
    )
    survey = pd.read_csv(SURVEY_CSV)
    r = quiet_release(survey, schema=str(SURVEY_SCHEMA), ignore_extra_columns=True,
                      workload="all-2way", mechanism="adaptive-projection", epsilon=1.0,
                      delta=1e-6, seed=11, rows=rows)
    expected = cli_eval(cli, SURVEY, ["--answers", str(files["answers"])])
    e = evaluate(r.answers, survey, schema=str(SURVEY_SCHEMA), ignore_extra_columns=True)
    assert e.report == expected
    # a Release is scored by its answers
    assert evaluate(r, survey, schema=str(SURVEY_SCHEMA),
                    ignore_extra_columns=True).report == expected
    expected = cli_eval(
        cli, SURVEY, ["--synthetic", str(files["synthetic"]), "--workload", "all-2way"])
    e = evaluate(r.synthetic, survey, schema=str(SURVEY_SCHEMA), workload="all-2way",
                 ignore_extra_columns=True)
    assert e.report == expected
    assert e.scored == "synthetic"
    # dpqr eval's note on plain rows, naming what was given
    plain = "the synthetic records: no weight column: read as 400 plain rows, each of weight 1"
    assert (plain in said) == (rows is not None), said
    # the frames are the report's figures
    assert list(e.overall.index) == ["synthetic", "uniform", "all-zeros"]
    assert e.overall.loc["uniform", "mean_marginal_l1"] == expected["baselines"]["uniform"][
        "mean_marginal_l1"]
    assert len(e.per_marginal) == expected["marginals"] == 10
    first = expected["per_marginal"][0]
    assert e.per_marginal.loc[0, "marginal"] == "|".join(first["attributes"])
    assert (e.per_marginal.loc[0, "l1"], e.per_marginal.loc[0, "max_abs"]) == (
        first["l1"], first["max_abs"])
    assert e.per_marginal.loc[0, "all_zeros_l1"] == pytest.approx(1.0)


def test_polars_frames_score_as_the_cli(cli, tmp_path):
    """A release from a Polars frame returns Polars frames; they score as the command
    line's files with the same seed (written by Polars for the Rust side)."""
    pl = pytest.importorskip("polars")
    files = cli_files(
        cli, tmp_path,
        [*SURVEY, "--workload", "all-2way", "--mechanism", "adaptive-projection",
         "--epsilon", "1", "--delta", "1e-6", "--seed", "11", "--rows", "400"],
    )
    survey = pl.read_csv(SURVEY_CSV)
    r = quiet_release(survey, schema=str(SURVEY_SCHEMA), ignore_extra_columns=True,
                      workload="all-2way", mechanism="adaptive-projection", epsilon=1.0,
                      delta=1e-6, seed=11, rows=400)
    assert isinstance(r.answers, pl.DataFrame) and isinstance(r.synthetic, pl.DataFrame)
    expected = cli_eval(cli, SURVEY, ["--answers", str(files["answers"])])
    e = evaluate(r.answers, survey, schema=str(SURVEY_SCHEMA), ignore_extra_columns=True)
    assert e.report == expected
    expected = cli_eval(
        cli, SURVEY, ["--synthetic", str(files["synthetic"]), "--workload", "all-2way"])
    e = evaluate(r.synthetic, survey, schema=str(SURVEY_SCHEMA), workload="all-2way",
                 ignore_extra_columns=True)
    assert e.report == expected


def test_adult_answers_from_a_frame_score_as_the_cli(cli, adult, adult_schema, tmp_path):
    data = ["--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN)]
    files = cli_files(
        cli, tmp_path,
        [*data, "--workload", "all-2way", "--mechanism", "gaussian", "--rho", "1",
         "--seed", "5"],
        synthetic=False,
    )
    r = quiet_release(adult, schema=adult_schema, workload="all-2way", mechanism="gaussian",
                      rho=1.0, seed=5)
    expected = cli_eval(cli, data, ["--answers", str(files["answers"])])
    e = evaluate(r.answers, adult, schema=adult_schema)
    assert e.report == expected
    assert e.overall.loc["released", "max_abs"] == expected["max_abs"]


def test_synthetic_records_need_a_workload_and_errors_name_what_was_given(adult, adult_schema):
    synthetic = pd.DataFrame({"age": [1, 2], "weight": [1.0, 1.0]})
    with pytest.raises(dpqr.DpqrError, match="synthetic records are scored on a workload"):
        dpqr.nonprivate.evaluate(synthetic, adult, schema=adult_schema)
    with pytest.raises(dpqr.DpqrError) as e:
        dpqr.nonprivate.evaluate(synthetic, adult, schema=adult_schema, workload="all-2way")
    assert "the synthetic records" in str(e.value) and "/tmp" not in str(e.value)
    with pytest.raises(TypeError):
        dpqr.nonprivate.evaluate([0.5, 0.5], adult, schema=adult_schema)
