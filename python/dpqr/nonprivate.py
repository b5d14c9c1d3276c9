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
import warnings
from typing import Any, Dict, Union

import pandas as pd

from . import DpqrWarning, _is_polars, _native

__all__ = ["draft_schema"]


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
