"""Progress on long runs: the pipeline's events reach a callback (from the release's own
threads, the interpreter lock taken for each), a bar or a line on stderr on request, and
nothing on stderr with ``progress=False`` or, by default, when stderr is not a terminal.
"""

from __future__ import annotations

import re
import sys
import warnings

import pandas as pd
import pytest

import dpqr
from conftest import SURVEY_CSV, SURVEY_SCHEMA

#: A short release with progress steps: adaptive-projection reports the share of its budget
#: spent after every round.
RELEASE = dict(
    schema=str(SURVEY_SCHEMA), ignore_extra_columns=True, workload="all-2way",
    mechanism="adaptive-projection", epsilon=1.0, delta=1e-6, rounds=10,
)

#: What no progress output may hold: a timing (elapsed, remaining, rate).
TIMING = re.compile(r"\d\d:\d\d|it/s|s/it|elapsed|ETA", re.IGNORECASE)


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    return pd.read_csv(SURVEY_CSV)


def test_the_callback_receives_the_stages_and_steps(survey):
    events = []
    r = dpqr.release(survey, progress=lambda *e: events.append(e), **RELEASE)
    assert r.synthetic is not None
    kinds = [e[0] for e in events]
    assert events[0] == ("stage", "loading data", None, None)
    assert kinds[1] == "counting" and "no percentage for this stage" in events[1][1]
    assert events[-1] == ("stage", "writing outputs", None, None)
    steps = [e for e in events if e[0] == "step"]
    assert steps, events
    assert all(e[1] == "adaptive-projection: budget spent (‰)" for e in steps)
    assert all(0 <= e[2] <= e[3] == 1000 for e in steps)
    done = [e[2] for e in steps]
    assert done == sorted(done) and done[-1] == 1000
    # at most one step per whole percentage
    assert len({d * 100 // 1000 for d in done}) == len(done)
    rounds = [e for e in events if e[0] == "round"]
    assert rounds and all(e[1].startswith("round ") for e in rounds)
    assert not any(TIMING.search(e[1]) for e in events)


def test_nothing_on_stderr_without_progress(survey, capfd):
    for progress in (False, None):  # None: stderr is not a terminal under pytest
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and no warning either
            dpqr.release(survey, progress=progress, **RELEASE)
        out, err = capfd.readouterr()
        assert (out, err) == ("", ""), progress


def test_a_line_on_stderr_without_tqdm(survey, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    dpqr.release(survey, progress=True, **RELEASE)
    err = capsys.readouterr().err
    assert "\rloading data" in err
    assert "adaptive-projection: budget spent (‰): 1000 of 1000 (100%)" in err
    assert "round " in err
    assert not TIMING.search(err)
    # the line is cleared at the end
    assert err.endswith("\r")


def test_a_tqdm_bar_on_stderr_without_timings(survey, capsys):
    pytest.importorskip("tqdm")
    dpqr.release(survey, progress=True, **RELEASE)
    err = capsys.readouterr().err
    assert "adaptive-projection: budget spent (‰)" in err
    assert "%|" in err
    assert not TIMING.search(err), err


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_failing_callback_does_not_stop_the_release(survey):
    def fails(*event):
        raise RuntimeError("from the callback")

    r = dpqr.release(survey, progress=fails, **RELEASE)
    assert len(r.answers) > 0


def test_progress_takes_a_bool_none_or_a_callable(survey):
    with pytest.raises(TypeError, match="progress='yes'"):
        dpqr.release(survey, progress="yes", **RELEASE)
