"""Type stub of the extension module ``dpqr._native`` (crates/dpqr-python/src/module.rs).

The package's functions (``dpqr.release``, ``dpqr.mechanisms``,
``dpqr.nonprivate.draft_schema``) call these once the data, schema and workload are files;
use those, not these.
"""

import os
from typing import Any, Callable, List, Literal, Mapping, Optional, Tuple, TypedDict, Union, overload

_Path = Union[str, "os.PathLike[str]"]

class DpqrError(ValueError):
    """An input dpqr refuses, or a release that failed: the message ``dpqr`` prints after
    ``error: `` for the same input."""

    #: The status ``dpqr`` would exit with: 2, or 3 for a spend a budget refused.
    exit_status: int

class _Certificate(TypedDict):
    mechanism: str
    model: str
    neighbouring: Optional[str]
    guarantee: str
    epsilon: Optional[float]
    delta: Optional[float]
    rho: Optional[float]
    approx_equivalent: Optional[Tuple[float, float]]
    statement: str

class _Ran(TypedDict):
    certificate: _Certificate
    labelled: bool
    synthetic: bool
    warnings: List[str]
    ledger_record: Optional[str]

class _Planned(TypedDict):
    plan: str
    warnings: List[str]

@overload
def release(
    *,
    data: Optional[_Path] = None,
    schema: Optional[_Path] = None,
    dataset: Optional[str] = None,
    attributes: Optional[List[str]] = None,
    workload: str,
    mechanism: str,
    answers: _Path,
    report: _Path,
    synthetic_out: _Path,
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    rho: Optional[float] = None,
    neighbouring: Optional[str] = None,
    post: Optional[str] = None,
    seed: Optional[int] = None,
    settings: Optional[Mapping[str, Any]] = None,
    synthetic: Optional[bool] = None,
    rows: Optional[int] = None,
    workload_seed: Optional[int] = None,
    allow_large_delta: bool = False,
    delimiter: Optional[str] = None,
    ignore_extra_columns: bool = False,
    labelled: bool = True,
    max_memory_mib: int = 4096,
    dry_run: Literal[True],
    assume_n: Optional[int] = None,
    progress: Optional[Callable[[str, str, Optional[int], Optional[int]], Any]] = None,
    ledger: Optional[_Path] = None,
    ledger_dataset: Optional[str] = None,
    data_is_a_frame: bool = False,
) -> _Planned:
    """The dry run (``dpqr release --dry-run``): every check made before data is read, and
    the plan as JSON text (``plan``); nothing but the data file's header is read, nothing
    written."""

@overload
def release(
    *,
    data: Optional[_Path] = None,
    schema: Optional[_Path] = None,
    dataset: Optional[str] = None,
    attributes: Optional[List[str]] = None,
    workload: str,
    mechanism: str,
    answers: _Path,
    report: _Path,
    synthetic_out: _Path,
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    rho: Optional[float] = None,
    neighbouring: Optional[str] = None,
    post: Optional[str] = None,
    seed: Optional[int] = None,
    settings: Optional[Mapping[str, Any]] = None,
    synthetic: Optional[bool] = None,
    rows: Optional[int] = None,
    workload_seed: Optional[int] = None,
    allow_large_delta: bool = False,
    delimiter: Optional[str] = None,
    ignore_extra_columns: bool = False,
    labelled: bool = True,
    max_memory_mib: int = 4096,
    dry_run: Literal[False] = False,
    assume_n: Optional[int] = None,
    progress: Optional[Callable[[str, str, Optional[int], Optional[int]], Any]] = None,
    ledger: Optional[_Path] = None,
    ledger_dataset: Optional[str] = None,
    data_is_a_frame: bool = False,
) -> _Ran:
    """One run of the ``dpqr release`` pipeline, the interpreter lock released: the answers,
    report and (when made) synthetic records written to the paths given; ``progress`` called
    (the lock taken) with every progress event as ``(kind, message, done, total)``. Ctrl-C
    stops it at its next stopping point and raises ``KeyboardInterrupt`` saying whether the
    budget was charged."""

def mechanisms() -> str:
    """The catalogue as JSON text, as ``dpqr mechanisms --json`` prints it."""

def draft_schema_nonprivate(
    csv: bytes, *, name: str, max_labels: int = 20, bins: int = 10
) -> str:
    """NON-PRIVATE: a schema (JSON text) drafted by reading the CSV text ``csv``."""

def evaluate_nonprivate(
    *,
    data: _Path,
    schema: _Path,
    answers: Optional[_Path] = None,
    synthetic: Optional[_Path] = None,
    workload: Optional[str] = None,
    workload_seed: Optional[int] = None,
    ignore_extra_columns: bool = False,
) -> Tuple[str, List[str]]:
    """NON-PRIVATE: answers or synthetic records scored against the true data beside the
    baselines, as ``dpqr eval --json`` prints it (JSON text), and ``dpqr eval``'s notes."""
