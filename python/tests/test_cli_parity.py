"""A release from Python equals ``dpqr release`` on the same data, seed and workload, and a
bad input raises ``dpqr.DpqrError`` with the command line's message.

The expected outputs are the files the ``dpqr`` binary writes, read by the tests' own
reader: the package's code never produces them.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpqr
from conftest import (
    ADULT_CSV,
    ADULT_DOMAIN,
    ADULT_W64,
    SURVEY_CSV,
    SURVEY_SCHEMA,
    cli_error,
    read_answers_file,
    run_cli,
)


def cli_release(cli: Path, out: Path, args: list) -> dict:
    """``dpqr release ARGS`` writing answers, report and synthetic rows into ``out``; the
    three read back."""
    answers, report, synthetic = out / "a.csv", out / "r.json", out / "s.csv"
    result = run_cli(
        cli,
        ["release", *args, "--quiet", "--answers-form", "labelled", "--out", str(answers),
         "--report", str(report), "--synthetic-out", str(synthetic)],
    )
    assert result.returncode == 0, result.stderr
    return {
        "answers": read_answers_file(answers),
        "report": json.loads(report.read_text()),
        "synthetic": pd.read_csv(synthetic, keep_default_na=False, na_values=[""]),
        "stderr": result.stderr,
    }


def test_adult_w64_from_a_pandas_frame_equals_the_cli(cli, adult, adult_schema, tmp_path):
    """The issue's example: adult's 64 3-way marginals with adaptive-projection."""
    expected = cli_release(
        cli,
        tmp_path,
        ["--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), "--workload", str(ADULT_W64),
         "--mechanism", "adaptive-projection", "--epsilon", "1", "--delta", "1e-9",
         "--seed", "7", "--rows", "1000"],
    )
    with pytest.warns(dpqr.DpqrWarning, match="--seed fixes the noise"):
        r = dpqr.release(
            adult,
            schema=adult_schema,
            workload=str(ADULT_W64),
            mechanism="adaptive-projection",
            epsilon=1.0,
            delta=1e-9,
            seed=7,
            rows=1000,
        )
    # the CLI printed the same warning
    assert "--seed fixes the noise" in expected["stderr"]
    pd.testing.assert_frame_equal(r.answers, expected["answers"], check_exact=True)
    assert r.answers["marginal"].nunique() == 64
    assert list(r.answers.columns) == ["marginal", "cell", "answer", "label", "count"]
    pd.testing.assert_frame_equal(r.synthetic, expected["synthetic"], check_exact=True)
    assert len(r.synthetic) == 1000
    assert list(r.synthetic.columns) == list(adult.columns)
    assert r.report == expected["report"]
    c = r.certificate
    assert c.statement == expected["report"]["statement"]
    assert (c.mechanism, c.model, c.neighbouring, c.guarantee) == (
        "adaptive-projection", "central", "add-remove", "zcdp")
    assert c.rho == expected["report"]["certificate"]["loss"]["Zcdp"]["rho"]
    assert c.approx_equivalent == (1.0, 1e-9)


def test_labelled_survey_from_a_pandas_frame_equals_the_cli(cli, tmp_path):
    """Raw values (labels, bins, empty cells, an extra column) through a schema: the frame
    handed over as Parquet counts as the CSV does, and the synthetic rows come back in the
    input's form."""
    expected = cli_release(
        cli,
        tmp_path,
        ["--data", str(SURVEY_CSV), "--domain", str(SURVEY_SCHEMA), "--ignore-extra-columns",
         "--workload", "all-2way", "--mechanism", "adaptive-projection", "--epsilon", "1",
         "--delta", "1e-6", "--seed", "11", "--rows", "400"],
    )
    survey = pd.read_csv(SURVEY_CSV)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpqr.DpqrWarning)
        r = dpqr.release(
            survey,
            schema=str(SURVEY_SCHEMA),
            ignore_extra_columns=True,
            workload="all-2way",
            mechanism="adaptive-projection",
            epsilon=1.0,
            delta=1e-6,
            seed=11,
            rows=400,
        )
    pd.testing.assert_frame_equal(r.answers, expected["answers"], check_exact=True)
    assert r.answers["label"].str.contains("region=north").any()
    # the synthetic rows: the CLI's values, in the frame's column types where they fit
    pd.testing.assert_frame_equal(
        r.synthetic, expected["synthetic"], check_dtype=False, check_exact=True)
    assert list(r.synthetic.columns) == ["region", "sex", "age", "employment", "income"]
    assert r.synthetic["sex"].isin(["female", "male"]).all()
    assert r.report == expected["report"]


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        ({"mechanism": "gausian", "epsilon": 1.0}, ["--mechanism", "gausian", "--epsilon", "1"]),
        ({"epsilon": -1.0, "delta": 1e-9}, ["--epsilon", "-1", "--delta", "1e-9"]),
        ({"epsilon": 0.0, "delta": 1e-9}, ["--epsilon", "0", "--delta", "1e-9"]),
        ({"epsilon": 1.0}, ["--epsilon", "1"]),
        ({"epsilon": 1.0, "delta": 0.5}, ["--epsilon", "1", "--delta", "0.5"]),
        ({"rho": 0.1, "rounds": 0}, ["--rho", "0.1", "--rounds", "0"]),
        ({"rho": 0.1, "eta": 0.5}, ["--rho", "0.1", "--eta", "0.5"]),
        ({"rho": 0.1, "neighbouring": "replace-one", "mechanism": "mwem"},
         ["--rho", "0.1", "--neighbouring", "replace-one", "--mechanism", "mwem"]),
        ({"rho": 0.1, "workload": "all-9way"}, ["--rho", "0.1", "--workload", "all-9way"]),
    ],
)
def test_bad_inputs_raise_the_cli_message(cli, adult, kwargs, flags, tmp_path):
    args = {"mechanism": "adaptive-projection", "workload": "all-2way", **kwargs}
    flag_names = {f for f in flags if f.startswith("--")}
    defaults = [] if "--mechanism" in flag_names else ["--mechanism", "adaptive-projection"]
    defaults += [] if "--workload" in flag_names else ["--workload", "all-2way"]
    result = run_cli(
        cli,
        ["release", "--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), *defaults, *flags,
         "--quiet", "--out", str(tmp_path / "a.csv")],
    )
    with pytest.raises(dpqr.DpqrError) as raised:
        dpqr.release(adult, schema=str(ADULT_DOMAIN), **args)
    assert str(raised.value) == cli_error(result)
    assert raised.value.exit_status == result.returncode
    assert isinstance(raised.value, ValueError)
    assert not (tmp_path / "a.csv").exists()


def test_an_unknown_column_in_the_workload_raises_the_cli_message(cli, adult, tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps([["age", "sex"], ["age", "colour"]]))
    result = run_cli(
        cli,
        ["release", "--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), "--workload",
         str(workload), "--mechanism", "gaussian", "--rho", "0.1", "--quiet", "--out",
         str(tmp_path / "a.csv")],
    )
    message = cli_error(result)
    assert "colour" in message
    # the same tables given as a list of tuples: written to a file by the package
    with pytest.raises(dpqr.DpqrError) as raised:
        dpqr.release(adult, schema=str(ADULT_DOMAIN), workload=[("age", "sex"), ("age", "colour")],
                     mechanism="gaussian", rho=0.1)
    assert str(raised.value) == message


def test_the_catalogue_is_the_clis(cli):
    result = run_cli(cli, ["mechanisms", "--json"])
    assert result.returncode == 0, result.stderr
    expected = json.loads(result.stdout)
    listed = dpqr.mechanisms()
    assert listed == expected
    assert "adaptive-projection" in {m["name"] for m in listed}


def test_the_nonprivate_draft_is_the_clis(cli):
    result = run_cli(cli, ["schema", "draft", "--data", str(SURVEY_CSV)])
    assert result.returncode == 0, result.stderr
    expected = json.loads(result.stdout)
    with pytest.warns(dpqr.DpqrWarning, match="NON-PRIVATE"):
        from_path = dpqr.nonprivate.draft_schema(SURVEY_CSV)
    assert from_path == expected
    # a frame of the file's text (nothing parsed) drafts the same
    text = pd.read_csv(SURVEY_CSV, dtype=str, keep_default_na=False)
    with pytest.warns(dpqr.DpqrWarning):
        assert dpqr.nonprivate.draft_schema(text) == expected
