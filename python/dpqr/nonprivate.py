"""NON-PRIVATE helpers: they read the data and return what they found in it.

Nothing here is differentially private. Their results disclose the records and are for the
data's curator only: never publish them, and never release with a schema drafted here
without reviewing it first (docs/python.md, README "From a raw CSV to a publishable
release").
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import pandas as pd

from . import (
    DpqrError,
    DpqrWarning,
    Release,
    SchemaSpec,
    WorkloadSpec,
    _is_polars,
    _native,
    _renamed,
    _workload_spec,
    _write_data,
    _write_schema,
)

__all__ = ["NonPrivateEvaluation", "draft_schema", "evaluate"]

#: The warning of every evaluation: ``dpqr eval``'s.
_EVAL_WARNING = (
    "WARNING: NON-PRIVATE EVALUATION. These error figures are computed from the true data "
    "and are not differentially private; use them for benchmarking only, never publish them "
    "as part of a release."
)


def _csv_bytes(data: Any) -> bytes:
    if isinstance(data, (str, os.PathLike)):
        raw = open(data, "rb").read()
        return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    if isinstance(data, pd.DataFrame):
        buffer = io.StringIO()
        data.to_csv(buffer, index=False)
        return buffer.getvalue().encode("utf-8")
    if _is_polars(data):
        return data.write_csv().encode("utf-8")
    raise TypeError(
        "data: give a pandas or Polars DataFrame or the path of a CSV (or gzip CSV) file, "
        f"not {type(data).__name__}"
    )


def draft_schema(
    data: Union["pd.DataFrame", Any, str, "os.PathLike[str]"],
    *,
    max_labels: int = 20,
    bins: int = 10,
) -> Dict[str, Any]:
    """NON-PRIVATE: draft a schema by reading the data, as ``dpqr schema draft`` does.

    A column becomes ``{"bins": [...]}`` (``bins`` equal-width bins from its minimum to its
    maximum) when every value is a number and it has more than ``max_labels`` distinct ones,
    and otherwise ``{"labels": [...]}`` with at most ``max_labels`` of its most frequent values
    (``"other": true`` when some were dropped); ``"missing": true`` when it has empty cells.

    The draft discloses the data: the labels that occur, the minima and maxima. Review and
    coarsen it (public category lists, round bin edges chosen without the data, rare labels
    merged into ``other``) before any release uses it, and never publish the draft. A
    :class:`dpqr.DpqrWarning` says so on every call.
    """
    text = _native.draft_schema_nonprivate(
        _csv_bytes(data),
        name=os.fspath(data) if isinstance(data, (str, os.PathLike)) else "the DataFrame",
        max_labels=max_labels,
        bins=bins,
    )
    warnings.warn(
        "NON-PRIVATE: this schema draft was made by reading the data; its labels, minima and "
        "maxima come from the private records. Review and coarsen it before releasing with "
        "it, and never publish the draft.",
        DpqrWarning,
        stacklevel=2,
    )
    return json.loads(text)


@dataclass(frozen=True)
class NonPrivateEvaluation:
    """NON-PRIVATE: what :func:`evaluate` returns — errors computed from the true
    data. Never publish them.

    * ``scored``: ``"released"`` (answers) or ``"synthetic"`` (a synthetic table's answers).
    * ``overall``: one row per answers scored — ``scored``'s, then the baselines
      ``uniform`` (every table uniform) and ``all-zeros`` — with ``max_abs``, ``mean_abs``,
      ``rmse`` and ``mean_marginal_l1``.
    * ``per_marginal``: one row per table (``marginal``, its attributes joined by ``|``),
      with ``l1`` (the ℓ1 distance between the released and the true table) and ``max_abs``
      (its largest cell error), and the same for the baselines (``uniform_l1``,
      ``uniform_max_abs``, ``all_zeros_l1``, ``all_zeros_max_abs``).
    * ``report``: the dict ``dpqr eval --json`` prints for the same files.
    """

    scored: str
    overall: pd.DataFrame
    per_marginal: pd.DataFrame
    report: Dict[str, Any]


def _evaluation(report: Dict[str, Any]) -> NonPrivateEvaluation:
    what = report["scored"]
    rows = {
        what: report,
        "uniform": report["baselines"]["uniform"],
        "all-zeros": report["baselines"]["all_zeros"],
    }
    metrics = ["max_abs", "mean_abs", "rmse", "mean_marginal_l1"]
    overall = pd.DataFrame([[r[m] for m in metrics] for r in rows.values()],
                           index=list(rows), columns=metrics)
    per = {"marginal": ["|".join(t["attributes"]) for t in report["per_marginal"]]}
    for prefix, r in (("", report), ("uniform_", rows["uniform"]),
                      ("all_zeros_", rows["all-zeros"])):
        per[f"{prefix}l1"] = [t["l1"] for t in r["per_marginal"]]
        per[f"{prefix}max_abs"] = [t["max_abs"] for t in r["per_marginal"]]
    return NonPrivateEvaluation(
        scored=what, overall=overall, per_marginal=pd.DataFrame(per), report=report
    )


def evaluate(
    released: Union[Release, "pd.DataFrame"],
    data: Union["pd.DataFrame", Any, str, "os.PathLike[str]"],
    *,
    schema: Optional[SchemaSpec] = None,
    workload: Optional[WorkloadSpec] = None,
    workload_seed: int = 0,
    ignore_extra_columns: bool = False,
) -> NonPrivateEvaluation:
    """NON-PRIVATE: score released answers, or synthetic records, against the true ``data``
    beside the trivial baselines (every table uniform, every answer 0), as ``dpqr eval``
    does — the same Rust scoring, the same figures as ``dpqr eval --json``.

    ``released`` is the ``answers`` DataFrame (pandas or Polars) of :func:`dpqr.release` (or a
    :class:`dpqr.Release`, whose answers are scored: marginal tables, plain or labelled), or
    a synthetic DataFrame in the input's form (``Release.synthetic``: weighted records with
    a last column ``weight``, or plain rows), whose answers to ``workload`` (marginal tables:
    ``"all-Kway"``, a list of column tuples, …) are scored. ``data`` is the true table (a
    pandas or Polars DataFrame, or a CSV, gzip CSV or Parquet path) and ``schema`` its schema,
    as given to :func:`dpqr.release` (``ignore_extra_columns`` too).

    The figures are computed from the true data and are not differentially private: for
    benchmarking only, never publish them. A :class:`dpqr.DpqrWarning` says so on every call.
    """
    if isinstance(released, Release):
        released = released.answers
    if not isinstance(released, pd.DataFrame) and not _is_polars(released):
        raise TypeError(
            "released: give the answers or synthetic DataFrame dpqr.release returned (or the "
            f"Release), not {type(released).__name__}"
        )
    is_answers = list(released.columns[:3]) == ["marginal", "cell", "answer"]
    if not is_answers and workload is None:
        raise DpqrError(
            "workload: synthetic records are scored on a workload of marginal tables; give "
            "workload=\"all-3way\", a list of column tuples or a workload JSON file"
        )
    with tempfile.TemporaryDirectory(prefix="dpqr-") as tmp:
        directory = Path(tmp)
        data_path, _ = _write_data(data, directory)
        schema_path = _write_schema(schema, directory)
        released_path = directory / ("answers.csv" if is_answers else "synthetic.csv")
        if _is_polars(released):
            # Polars writes missing values as empty cells and floats in their shortest
            # round-trip form, as pandas does
            released.write_csv(released_path)
        else:
            released.to_csv(released_path, index=False)
        workload_text = None if is_answers else _workload_spec(workload, directory)
        names = {
            str(data_path): "the DataFrame",
            str(schema_path): "the schema dict",
            str(released_path): "the answers" if is_answers else "the synthetic records",
        }
        if workload_text is not None:
            names[workload_text] = "the workload"
        names = {p: n for p, n in names.items() if Path(p).parent == directory}
        try:
            text, notes = _native.evaluate_nonprivate(
                data=data_path,
                schema=schema_path,
                answers=released_path if is_answers else None,
                synthetic=None if is_answers else released_path,
                workload=workload_text,
                workload_seed=workload_seed,
                ignore_extra_columns=ignore_extra_columns,
            )
        except DpqrError as e:
            raise _renamed(e, names) from None
    for note in notes:
        for path, name in names.items():
            note = note.replace(path, name)
        warnings.warn(note, DpqrWarning, stacklevel=2)
    warnings.warn(_EVAL_WARNING, DpqrWarning, stacklevel=2)
    return _evaluation(json.loads(text))
