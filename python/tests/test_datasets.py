"""Bundled datasets by name (``dataset=``, ``--dataset``) and ``attributes=``
(``--attributes``): the same answers and report as ``dpqr release`` with the flags, and the
command line's message for a bad name.

The expected outputs are the files the ``dpqr`` binary writes, read by the tests' reader.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpqr
from conftest import ADULT_CSV, ADULT_DOMAIN, cli_error, read_answers_file, run_cli

#: The Gaussian baseline on the 2-way tables, seeded (the tests compare draws).
RELEASE = dict(workload="all-2way", mechanism="gaussian", rho=1.0, seed=3)
FLAGS = ["--workload", "all-2way", "--mechanism", "gaussian", "--rho", "1", "--seed", "3"]
KEPT = ["age", "sex", "race"]


def seeded(data=None, **kwargs) -> dpqr.Release:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpqr.DpqrWarning)
        return dpqr.release(data, **kwargs)


def cli_answers(cli: Path, out: Path, args: list) -> tuple:
    """``dpqr release ARGS`` (labelled answers and a report): both read back."""
    answers, report = out / "a.csv", out / "r.json"
    result = run_cli(cli, ["release", *args, "--quiet", "--answers-form", "labelled",
                           "--out", str(answers), "--report", str(report)])
    assert result.returncode == 0, result.stderr
    return read_answers_file(answers), json.loads(report.read_text())


def test_a_bundled_dataset_with_attributes_equals_the_cli(cli, tmp_path):
    answers, report = cli_answers(
        cli, tmp_path, ["--dataset", "adult", "--attributes", ",".join(KEPT), *FLAGS])
    r = seeded(dataset="adult", attributes=KEPT, **RELEASE)
    pd.testing.assert_frame_equal(r.answers, answers, check_exact=True)
    assert r.report == report
    assert r.answers["marginal"].unique().tolist() == ["age|sex", "age|race", "sex|race"]
    # one string of names, as the flag takes them
    again = seeded(dataset="adult", attributes="age,sex,race", **RELEASE)
    pd.testing.assert_frame_equal(again.answers, answers, check_exact=True)
    # the plan of the same release is the dry run's
    result = run_cli(cli, ["release", "--dataset", "adult", "--attributes", ",".join(KEPT),
                           *FLAGS, "--dry-run", "--out", str(tmp_path / "x.csv")])
    assert result.returncode == 0, result.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpqr.DpqrWarning)
        p = dpqr.plan(dataset="adult", attributes=KEPT, **RELEASE)
    # but for the outputs' line: the outputs are temporary files in Python
    expected = result.stdout.splitlines()
    assert p.lines[:-1] == expected[:-1]
    assert expected[-1].startswith("outputs: ")


def test_attributes_of_a_frame_equal_the_cli_on_its_file(cli, adult, tmp_path):
    answers, _ = cli_answers(
        cli, tmp_path,
        ["--data", str(ADULT_CSV), "--domain", str(ADULT_DOMAIN), "--attributes",
         "race,age", *FLAGS])
    r = seeded(adult, schema=str(ADULT_DOMAIN), attributes=["race", "age"], **RELEASE)
    pd.testing.assert_frame_equal(r.answers, answers, check_exact=True)
    assert r.answers["marginal"].unique().tolist() == ["race|age"]


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        ({"dataset": "adlt"}, ["--dataset", "adlt"]),
        ({"dataset": "adult", "attributes": ["age", "age"]},
         ["--dataset", "adult", "--attributes", "age,age"]),
        ({"dataset": "adult", "attributes": ["age", "colour"]},
         ["--dataset", "adult", "--attributes", "age,colour"]),
    ],
)
def test_bad_names_raise_the_cli_message(cli, kwargs, flags, tmp_path):
    result = run_cli(cli, ["release", *flags, *FLAGS, "--quiet",
                           "--out", str(tmp_path / "a.csv")])
    with pytest.raises(dpqr.DpqrError) as raised:
        seeded(**kwargs, **RELEASE)
    assert str(raised.value) == cli_error(result)
    assert raised.value.exit_status == result.returncode


def test_data_and_a_dataset_are_refused_together(adult):
    with pytest.raises(dpqr.DpqrError, match="give the data or a bundled dataset, not both"):
        seeded(adult, dataset="adult", **RELEASE)
    with pytest.raises(dpqr.DpqrError, match="comes with its own domain"):
        seeded(dataset="adult", schema=str(ADULT_DOMAIN), **RELEASE)
    with pytest.raises(dpqr.DpqrError, match=r"data: give a pandas or Polars DataFrame"):
        seeded(**RELEASE)
    with pytest.raises(TypeError, match="attributes: give column names"):
        seeded(dataset="adult", attributes=["age", 3], **RELEASE)
