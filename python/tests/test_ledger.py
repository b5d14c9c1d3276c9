"""The budget ledger from Python: a release is charged to the ledger's dataset (a DataFrame
only under a name the caller gives), refused with exit status 3 and the command line's
message once the budget is spent, and planned without recording anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import dpqr
from conftest import SURVEY_CSV, SURVEY_SCHEMA, cli_error, run_cli

#: A pure-ε release of the survey's 2-way tables under replace-one neighbours, the ledger's
#: relation: each charges ε = 1.
RELEASE = dict(
    schema=str(SURVEY_SCHEMA), ignore_extra_columns=True, workload="all-2way",
    mechanism="laplace", epsilon=1.0, neighbouring="replace-one",
)
FLAGS = ["--data", str(SURVEY_CSV), "--domain", str(SURVEY_SCHEMA), "--ignore-extra-columns",
         "--workload", "all-2way", "--mechanism", "laplace", "--epsilon", "1",
         "--neighbouring", "replace-one"]


@pytest.fixture()
def ledger(cli, tmp_path) -> Path:
    """A ledger of ε = 1.5 per dataset with the datasets ``survey`` and ``other``."""
    path = tmp_path / "ledger.json"
    result = run_cli(cli, ["ledger", "init", str(path), "--epsilon", "1.5",
                           "--dataset", "survey", "--dataset", "other"])
    assert result.returncode == 0, result.stderr
    return path


def test_a_frame_is_charged_under_the_name_given_and_refused_when_spent(cli, ledger, tmp_path):
    survey = pd.read_csv(SURVEY_CSV)
    before = ledger.read_text()
    with pytest.raises(dpqr.DpqrError, match="ledger_dataset=") as e:
        dpqr.release(survey, ledger=ledger, **RELEASE)
    assert e.value.exit_status == 2
    assert ledger.read_text() == before
    # planned: the ledger checked, nothing recorded
    p = dpqr.plan(survey, ledger=ledger, ledger_dataset="survey", **RELEASE)
    assert p.lines[-1] == (
        "ledger: the spend fits the remaining budget of dataset 'survey' (nothing recorded by "
        "a dry run)")
    assert ledger.read_text() == before
    r = dpqr.release(survey, ledger=ledger, ledger_dataset="survey", **RELEASE)
    assert r.ledger_record.startswith(f"ledger {ledger}: recorded ")
    assert r.ledger_record.endswith("for dataset 'survey'")
    assert "dataframe:survey" in json.dumps(json.loads(ledger.read_text()))
    # ε = 1 of 1.5 spent: the next release of the dataset is refused, as the CLI refuses it
    after_one = ledger.read_text()
    with pytest.raises(dpqr.DpqrError) as e:
        dpqr.release(str(SURVEY_CSV), ledger=ledger, ledger_dataset="survey", **RELEASE)
    assert e.value.exit_status == 3
    assert ledger.read_text() == after_one
    result = run_cli(cli, ["release", *FLAGS, "--ledger", str(ledger), "--ledger-dataset",
                           "survey", "--out", str(tmp_path / "a.csv")])
    assert result.returncode == 3
    assert str(e.value) == cli_error(result)
    # the other dataset has its own budget
    r = dpqr.release(survey, ledger=ledger, ledger_dataset="other", **RELEASE)
    assert r.ledger_record.endswith("for dataset 'other'")


def test_a_path_is_charged_as_the_cli_charges_it(cli, ledger):
    r = dpqr.release(str(SURVEY_CSV), ledger=ledger, ledger_dataset="survey", **RELEASE)
    assert r.ledger_record.endswith("for dataset 'survey'")
    # the ledger knows the file by its path, as after `dpqr release --data FILE`
    assert f"file:{SURVEY_CSV.resolve()}" in ledger.read_text()
    assert dpqr.release(str(SURVEY_CSV), **RELEASE).ledger_record is None


def test_a_dataset_without_a_ledger_is_refused():
    with pytest.raises(dpqr.DpqrError, match="give ledger= too"):
        dpqr.release(str(SURVEY_CSV), ledger_dataset="survey", **RELEASE)
