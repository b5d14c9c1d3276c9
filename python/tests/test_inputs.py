"""The forms of the inputs: a pandas frame, a Polars frame, a Parquet path and a CSV path
give the same release; schemas and workloads as dicts, lists or files; what is refused in
Python before Rust is called; the seed's warning; the interpreter lock."""

from __future__ import annotations

import json
import threading
import time
import warnings

import pandas as pd
import pytest

import dpqr
from conftest import ADULT_CSV, ADULT_DOMAIN, SURVEY_CSV, SURVEY_SCHEMA

TABLES = [("age", "sex", "income>50K"), ("workclass", "race"), ("education-num",)]


def seeded(data, **kwargs):
    """A seeded release (its warning silenced: it is tested below)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpqr.DpqrWarning)
        return dpqr.release(data, seed=5, **kwargs)


@pytest.fixture(scope="module")
def from_pandas(adult, adult_schema):
    return seeded(adult, schema=adult_schema, workload=TABLES, epsilon=2.0, delta=1e-9)


def test_polars_parquet_and_csv_give_the_pandas_answers(from_pandas, adult, tmp_path):
    pl = pytest.importorskip("polars")
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "adult.parquet"
    pq.write_table(pa.Table.from_pandas(adult, preserve_index=False), parquet)
    inputs = {
        "polars": pl.read_csv(ADULT_CSV),
        "parquet": parquet,
        "csv": str(ADULT_CSV),
    }
    for name, data in inputs.items():
        # pandas frames asked for (a Polars frame gives Polars ones by default: below)
        r = seeded(data, schema=ADULT_DOMAIN, workload=TABLES, epsilon=2.0, delta=1e-9,
                   frames="pandas")
        pd.testing.assert_frame_equal(r.answers, from_pandas.answers, check_exact=True, obj=name)
        pd.testing.assert_frame_equal(
            r.synthetic, from_pandas.synthetic, check_exact=True, obj=name)
    assert from_pandas.answers["marginal"].unique().tolist() == [
        "age|sex|income>50K", "workclass|race", "education-num"]
    # weighted records without rows=N: the weight column last
    assert list(from_pandas.synthetic.columns) == [*adult.columns, "weight"]


def values(frame) -> dict:
    """A pandas or Polars frame's values by column, a missing value as ``None``."""
    if isinstance(frame, pd.DataFrame):
        return {c: [None if pd.isna(v) else v for v in frame[c].tolist()] for c in frame.columns}
    return {c: frame[c].to_list() for c in frame.columns}


#: The survey's 2-way tables with adaptive-projection and 300 synthetic rows.
SURVEY_RELEASE = dict(
    schema=str(SURVEY_SCHEMA), ignore_extra_columns=True, workload="all-2way",
    mechanism="adaptive-projection", epsilon=1.0, delta=1e-6, rows=300,
)


def test_a_polars_frame_gives_polars_frames_with_the_pandas_records():
    pl = pytest.importorskip("polars")
    # the survey as each library reads it, in the same types: labels as text, ages and
    # incomes as integers with missing values
    pandas_frame = pd.read_csv(SURVEY_CSV, dtype={"age": "Int64", "income": "Int64"})
    polars_frame = pl.read_csv(SURVEY_CSV)
    assert (polars_frame.schema["age"], polars_frame.schema["region"]) == (pl.Int64, pl.String)
    from_pandas = seeded(pandas_frame, **SURVEY_RELEASE)
    from_polars = seeded(polars_frame, **SURVEY_RELEASE)
    assert isinstance(from_polars.answers, pl.DataFrame)
    assert isinstance(from_polars.synthetic, pl.DataFrame)
    assert isinstance(from_pandas.synthetic, pd.DataFrame)
    assert from_polars.synthetic.columns == ["region", "sex", "age", "employment", "income"]
    assert values(from_polars.synthetic) == values(from_pandas.synthetic)
    assert values(from_polars.answers) == values(from_pandas.answers)
    assert from_polars.answers.columns == ["marginal", "cell", "answer", "label", "count"]
    # labels as the input's text; a bins column holds the number drawn within the bin as a
    # float, not truncated to the input's integers (a whole number would read as a code)
    synthetic = from_polars.synthetic
    assert synthetic.schema["region"] == pl.String
    assert synthetic.schema["age"] == pl.Float64
    assert from_pandas.synthetic["age"].dtype == "float64"
    ages = [a for a in synthetic["age"].to_list() if a is not None]
    assert ages and any(a != int(a) for a in ages)
    assert set(synthetic["sex"].to_list()) <= {"female", "male"}
    # categories and enums stay categories and enums, with the same records
    typed = polars_frame.with_columns(
        pl.col("sex").cast(pl.Enum(["female", "male"])), pl.col("region").cast(pl.Categorical))
    r = seeded(typed, **SURVEY_RELEASE)
    assert r.synthetic.schema["sex"] == pl.Enum(["female", "male"])
    assert r.synthetic.schema["region"] == pl.Categorical
    assert values(r.synthetic) == values(from_polars.synthetic)


def test_frames_chooses_the_library_of_the_returned_frames():
    pl = pytest.importorskip("polars")
    from_path = seeded(str(SURVEY_CSV), **SURVEY_RELEASE)
    assert isinstance(from_path.synthetic, pd.DataFrame)
    as_polars = seeded(str(SURVEY_CSV), frames="polars", **SURVEY_RELEASE)
    assert isinstance(as_polars.answers, pl.DataFrame)
    assert isinstance(as_polars.synthetic, pl.DataFrame)
    assert values(as_polars.synthetic) == values(from_path.synthetic)
    assert values(as_polars.answers) == values(from_path.answers)
    with pytest.raises(dpqr.DpqrError, match=r"frames='arrow': give \"pandas\", \"polars\""):
        seeded(str(SURVEY_CSV), frames="arrow", **SURVEY_RELEASE)


def test_labels_come_back_as_written_in_the_input_s_types():
    """A label made of digits stays the input's text ("01", not 1); integer codes stay
    integers, categories categories."""
    n = 240
    frame = pd.DataFrame({
        "zip": [["01", "02", "10"][i % 3] for i in range(n)],
        "code": [i % 4 for i in range(n)],
        "colour": pd.Categorical([["red", "blue"][i % 2] for i in range(n)]),
    })
    schema = {"zip": {"labels": ["01", "02", "10"]}, "code": 4,
              "colour": {"labels": ["red", "blue"]}}
    r = seeded(frame, schema=schema, workload="all-2way", mechanism="adaptive-projection",
               rho=1.0, rows=100)
    assert set(r.synthetic["zip"]) <= {"01", "02", "10"}
    assert r.synthetic["code"].dtype == frame["code"].dtype
    assert set(r.synthetic["code"]) <= {0, 1, 2, 3}
    assert isinstance(r.synthetic["colour"].dtype, pd.CategoricalDtype)
    assert set(r.synthetic["colour"].dropna()) <= {"red", "blue"}


def test_workloads_as_tuples_files_and_json_objects_agree(from_pandas, adult, tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps([list(t) for t in TABLES]))
    for workload in (path, str(path), {"class": "marginals", "marginals": [list(t) for t in TABLES]}):
        r = seeded(adult, schema=ADULT_DOMAIN, workload=workload, epsilon=2.0, delta=1e-9)
        pd.testing.assert_frame_equal(r.answers, from_pandas.answers, check_exact=True)


def test_answers_only_mechanisms_and_other_query_classes(adult):
    r = seeded(adult, schema=ADULT_DOMAIN, workload=TABLES, mechanism="gaussian", rho=0.5,
               neighbouring="replace-one")
    assert r.synthetic is None
    # replace-one: the counts are answer × n, n public
    assert r.answers["count"].sum() == pytest.approx(len(TABLES) * len(adult), rel=0.01)
    assert r.certificate.neighbouring == "replace-one"
    conj = {"class": "conjunctions", "queries": [{"sex": 1, "race": 0}, {"age": 3}]}
    q = seeded(adult, schema=ADULT_DOMAIN, workload=conj, mechanism="laplace", epsilon=1.0)
    assert list(q.answers.columns) == ["query", "class", "description", "answer"]
    assert len(q.answers) == 2
    assert q.certificate.guarantee == "pure" and q.certificate.epsilon == 1.0


def test_a_seed_warns_and_no_seed_does_not(adult):
    kwargs = dict(schema=ADULT_DOMAIN, workload=TABLES, mechanism="gaussian", rho=0.5)
    with pytest.warns(dpqr.DpqrWarning, match="never for a release you publish"):
        dpqr.release(adult, seed=1, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = dpqr.release(adult, **kwargs)
    assert not [w for w in caught if "seed" in str(w.message)]
    assert r.report["randomness"] == "operating-system entropy"


def test_refusals_before_rust(adult):
    with pytest.raises(dpqr.DpqrError, match="schema: give the public schema"):
        dpqr.release(adult, epsilon=1.0, delta=1e-9)
    with pytest.raises(TypeError, match="data: give a pandas or Polars DataFrame"):
        dpqr.release(adult.to_dict(), schema=ADULT_DOMAIN, epsilon=1.0, delta=1e-9)
    with pytest.raises(dpqr.DpqrError, match=r"unknown keyword argument \"round\""):
        dpqr.release(adult, schema=ADULT_DOMAIN, rho=0.1, round=3)
    with pytest.raises(dpqr.DpqrError, match=r"rounds=2.5: give a whole number"):
        dpqr.release(adult, schema=ADULT_DOMAIN, rho=0.1, rounds=2.5)
    with pytest.raises(dpqr.DpqrError, match=r"seed=-1: give a whole number from 0"):
        dpqr.release(adult, schema=ADULT_DOMAIN, rho=0.1, seed=-1)
    with pytest.raises(dpqr.DpqrError, match=r"neighbouring=\"adjacent\""):
        dpqr.release(adult, schema=ADULT_DOMAIN, rho=0.1, neighbouring="adjacent")


def test_errors_name_what_the_caller_gave_not_the_temporary_files():
    frame = pd.DataFrame({"a": ["u", "v", "u"], "b": [True, False, True]})
    schema = {"a": {"labels": ["u", "v"]}, "b": 2}
    with pytest.raises(dpqr.DpqrError) as raised:
        dpqr.release(frame, schema=schema, workload="all-1way", rho=0.1)
    # the loader's message, with the frame's temporary Parquet file named as the frame
    assert str(raised.value).startswith("the DataFrame: column 'b': the column holds true/false")
    assert raised.value.exit_status == 2
    with pytest.raises(dpqr.DpqrError) as raised:
        dpqr.release(frame, schema={"a": {"labels": "u"}}, workload="all-1way", rho=0.1)
    assert str(raised.value).startswith("the schema dict"), raised.value
    assert "dpqr-" not in str(raised.value)


def test_other_threads_run_during_a_release(adult, monkeypatch):
    """The interpreter lock is released while the pipeline runs: a Python loop on another
    thread keeps counting during the native call, at a good share of the rate it counts
    alone (about half here, beside the release's own threads). Were the lock held, it could
    count only around the call (measured: 2 to 6 % of the rate)."""
    done = threading.Event()
    ticks = 0
    during = []

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    native = dpqr._native.release

    def timed(**kwargs):
        start, began = ticks, time.perf_counter()
        try:
            return native(**kwargs)
        finally:
            during.append((ticks - start, time.perf_counter() - began))

    monkeypatch.setattr(dpqr._native, "release", timed)
    counter = threading.Thread(target=count)
    counter.start()
    try:
        before, began = ticks, time.perf_counter()
        time.sleep(0.2)
        rate = (ticks - before) / (time.perf_counter() - began)
        seeded(adult, schema=ADULT_DOMAIN, workload="all-2way", mechanism="gaussian", rho=0.5)
    finally:
        done.set()
        counter.join()
    assert len(during) == 1
    counted, seconds = during[0]
    assert counted > 0.2 * rate * seconds, (counted, rate, seconds)
