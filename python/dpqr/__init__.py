"""dpqr: differentially private query release from pandas and Polars DataFrames.

A release answers a workload of statistical queries (by default every 3-way marginal table)
from a private table, and gives synthetic data where the mechanism makes it, with a stated
privacy guarantee. The mechanisms, the accounting, the checks and every error message are
those of the ``dpqr`` command line: :func:`release` runs the same Rust pipeline as
``dpqr release`` (docs/python.md puts the two side by side).

>>> import dpqr, pandas as pd
>>> adult = pd.read_csv("data/adult/adult.csv")
>>> r = dpqr.release(adult, schema="data/adult/adult-domain.json",
...                  workload="data/workloads/adult_w64.json",
...                  mechanism="adaptive-projection", epsilon=1.0, delta=1e-9, rows=10_000)

``r.answers`` holds the 64 tables' cells with their labels, proportions and counts,
``r.synthetic`` 10 000 synthetic rows with adult's columns, ``r.certificate`` the guarantee.

Mechanisms are named as in ``dpqr mechanisms`` (:func:`mechanisms` lists them); their papers
are cited there by authors and year, and resolved in docs/references.md.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native, _progress
from ._native import DpqrError
from ._progress import ProgressOption

__all__ = [
    "Certificate",
    "DpqrError",
    "DpqrWarning",
    "Plan",
    "Release",
    "mechanisms",
    "plan",
    "release",
]

#: What :func:`release` takes as data: a pandas or Polars DataFrame, or the path of a CSV,
#: gzip-compressed CSV or Parquet file.
Data = Union["pd.DataFrame", Any, str, "os.PathLike[str]"]
#: A workload: ``"all-Kway"``, ``"random-Kway:M"``, the path of a workload JSON file, a list
#: of tables (each a sequence of column names), or a workload JSON object (``{"class": ...}``).
WorkloadSpec = Union[str, "os.PathLike[str]", Sequence[Sequence[str]], Mapping[str, Any]]
#: A schema: a dict in the JSON form of ``--domain`` files, or the path of one.
SchemaSpec = Union[Mapping[str, Any], str, "os.PathLike[str]"]
#: The library of the DataFrames a release returns: ``"pandas"``, ``"polars"``, or ``None``
#: (the input's: Polars for a Polars frame, pandas for a pandas frame or a path).
FramesOption = Optional[str]


class DpqrWarning(UserWarning):
    """A warning ``dpqr release`` prints on stderr: a fixed ``seed`` (the release is then not
    private against whoever knows the seed), a large δ accepted, or answers so noisy that any
    table of proportions would be closer to the truth. The same text as the command line's."""


@dataclass(frozen=True)
class Certificate:
    """The privacy guarantee a release carries, stated before the mechanism ran (it depends
    on the parameters only, never on the data).

    ``guarantee`` is the mechanism's native accounting: ``"pure"`` (ε-DP, ``epsilon``),
    ``"approx"`` ((ε, δ)-DP, ``epsilon`` and ``delta``) or ``"zcdp"`` (ρ-zCDP, ``rho``; its
    (ε, δ) at the δ asked is ``approx_equivalent``). ``model`` is ``"central"`` (a curator
    ran the mechanism on the records; ``neighbouring`` is the relation the guarantee is
    stated for, ``"add-remove"`` or ``"replace-one"``) or ``"local"`` (every simulated client
    randomized its own record; ``neighbouring`` is ``None``). ``statement`` is the line
    ``dpqr release`` prints after "privacy spent:".
    """

    mechanism: str
    model: str
    neighbouring: Optional[str]
    guarantee: str
    epsilon: Optional[float]
    delta: Optional[float]
    rho: Optional[float]
    approx_equivalent: Optional[Tuple[float, float]]
    statement: str


@dataclass(frozen=True)
class Release:
    """What :func:`release` returns.

    * ``certificate``: the guarantee (:class:`Certificate`).
    * ``answers`` and ``synthetic`` are DataFrames of the input's library (a
      ``polars.DataFrame`` from a Polars frame, a ``pandas.DataFrame`` from a pandas frame
      or a path) unless :func:`release` was given ``frames=``.
    * ``answers``: one row per answer, as the answers file of ``dpqr release`` holds them.
      For marginal tables released in the central model: ``marginal`` (the table, e.g.
      ``age|sex``), ``cell`` (its codes, ``3|1``), ``answer`` (the released proportion),
      ``label`` (the cell named through the schema, ``age=[25,45)|sex=female``) and
      ``count`` (the proportion times the total: the public n under replace-one neighbours,
      the release's own noisy total under add/remove, where n is private; empty when the
      mechanism states no total). The report's ``counts`` says which. Local-model releases
      give ``marginal, cell, answer``; other query classes ``query, class, description,
      answer``.
    * ``synthetic``: the synthetic records in the input's form (labels, a number drawn within
      each bin, empty for ``missing``, integer codes), weighted (a last column ``weight``)
      or, with ``rows=N``, ``N`` plain rows; ``None`` when none were made. From a frame,
      each column takes the input column's type where its values allow (labels as the
      input's strings or categories, codes as its integers); a bins column holds the
      number drawn within the bin as a float whatever the input's type (a whole number
      there would read back as a code: docs/python.md).
    * ``report``: the release report (``dpqr release --report``) as a dict: the certificate,
      the mechanism's diagnostics, the settings, the schema, what the counts are scaled by.
    * ``ledger_record``: with ``ledger=``, the line ``dpqr release`` prints when the spend is
      recorded (the ledger, the spend, the dataset); ``None`` without a ledger.
    """

    certificate: Certificate
    answers: Any
    synthetic: Optional[Any]
    report: Dict[str, Any]
    ledger_record: Optional[str] = None


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` returns: the plan of a release, made from public inputs only (the
    schema, the workload, the parameters), as ``dpqr release --dry-run`` prints it.

    * ``certificate``: the guarantee the release would carry (:class:`Certificate`).
    * ``lines``: the lines ``dpqr release --dry-run`` prints, in order (where the command
      line names a file that is a temporary copy here, the line names what was given:
      ``the DataFrame``, ``the answers``, …).
    * ``count_std``: the standard deviation of the noise on each count where it is fixed
      before the run — exact for the answer-perturbation mechanisms (``gaussian``,
      ``laplace``), the σ of a round's measurement before annealing for
      ``adaptive-projection``; ``None`` for the others.
    * ``prediction``: the predicted error as a dict, by its ``kind``: ``"count-noise"``
      (``count_std``, and with ``assume_n`` the standard deviation of an answer
      ``answer_std`` and a table's expected ℓ1 error ``table_l1``), ``"schedule"`` (the
      noise schedule of ``adaptive-projection``: ρ and σ of the 1-way tables, of a round
      before and after annealing, of the cheap tables and the checks, ``low_budget`` — the
      1-way tables and rounds if the release finds the budget low, or ``None`` — and the
      number of rounds),
      ``"stated-bound"`` (the bound the mechanism's paper states for ``assume_n`` records:
      ``statement``, ``value``, ``confidence``, ``citation``), ``"stated-bound-needs-n"``,
      or ``"none"``; ``None`` for a local-model mechanism.
    * ``settings``: the settings line (``--rounds 20, --eta 0.4 (default)``); ``workload``
      in words, ``queries`` its number of answers, ``touched_attributes``; ``memory_bytes``
      the answers' memory and ``memory_refused`` whether ``max_memory_mib`` would refuse
      the release; ``universe_log10`` the records a universe-enumerating mechanism would
      enumerate (log₁₀); ``checks_pass`` whether the mechanism's checks of public inputs
      pass (``checks_refusal`` says why not); ``auto_choice`` what ``mechanism="auto"``
      chose and why; ``synthetic`` whether the release would make synthetic records.
    """

    certificate: Certificate
    lines: List[str]
    count_std: Optional[float]
    prediction: Optional[Dict[str, Any]]
    settings: Optional[str]
    workload: str
    queries: int
    touched_attributes: int
    memory_bytes: Optional[int]
    memory_refused: Optional[bool]
    universe_log10: Optional[float]
    checks_pass: Optional[bool]
    checks_refusal: Optional[str]
    auto_choice: Optional[str]
    synthetic: bool

    def __str__(self) -> str:
        return "\n".join(self.lines)


def mechanisms() -> List[Dict[str, Any]]:
    """The catalogue, one dict per mechanism, as ``dpqr mechanisms --json`` prints it: its
    ``name`` (what :func:`release` takes as ``mechanism``), ``description`` (with the papers
    it implements, by authors and year), ``guarantee``, ``budget_kinds``, ``neighbouring``
    relations and default, ``synthetic_data``, ``reads``, ``universe``, ``wrong_choice`` and
    its ``settings`` (each with ``name``, the keyword :func:`release` takes, and
    ``default``)."""
    return json.loads(_native.mechanisms())


def _is_polars(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "polars" and hasattr(data, "write_parquet")


def _write_data(data: Data, directory: Path) -> Tuple[Path, Optional[pd.DataFrame]]:
    """The data as a file the pipeline reads: a path as it is, a DataFrame written as Parquet
    into ``directory`` (types kept: text, numbers, nulls for empty cells). Returns the file
    and, for a pandas DataFrame, the frame (the synthetic records take its column types)."""
    if isinstance(data, (str, os.PathLike)):
        return Path(data), None
    path = directory / "data.parquet"
    if isinstance(data, pd.DataFrame):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise DpqrError(f"the DataFrame cannot be handed to dpqr as Parquet: {e}") from e
        pq.write_table(table, path)
        return path, data
    if _is_polars(data):
        data.write_parquet(path)
        return path, None
    raise TypeError(
        "data: give a pandas or Polars DataFrame, or the path of a CSV, gzip CSV or Parquet "
        f"file, not {type(data).__name__}"
    )


def _write_schema(schema: Optional[SchemaSpec], directory: Path) -> Path:
    if schema is None:
        raise DpqrError(
            "schema: give the public schema, a dict like {\"age\": {\"bins\": [0, 18, 65, 120]}, "
            "\"sex\": {\"labels\": [\"female\", \"male\"]}, \"children\": 5} or the path of a "
            "schema JSON file; it must be fixed without looking at the data "
            "(dpqr.nonprivate.draft_schema drafts one from the data, NON-PRIVATE: review it)"
        )
    if isinstance(schema, (str, os.PathLike)):
        return Path(schema)
    path = directory / "schema.json"
    path.write_text(json.dumps(schema))
    return path


def _workload_spec(workload: WorkloadSpec, directory: Path) -> str:
    """The workload as ``--workload`` takes it: a list of tables or a JSON object is written
    to a file in ``directory``."""
    if isinstance(workload, (str, os.PathLike)):
        return os.fspath(workload)
    if isinstance(workload, Mapping):
        value: Any = dict(workload)
    else:
        value = [[c for c in table] if not isinstance(table, str) else [table] for table in workload]
    path = directory / "workload.json"
    path.write_text(json.dumps(value))
    return str(path)


#: How ``pd.read_csv`` reads every float exactly as written: ``float_precision="round_trip"``
#: before pandas 3, its default (and the argument deprecated) since.
_EXACT_FLOATS: Dict[str, Any] = (
    {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
)


def _read_answers(path: Path) -> pd.DataFrame:
    """The answers file as a DataFrame: names and codes as text (a label ``NA`` stays
    ``NA``), answers and counts as floats (an empty count is missing)."""
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    numeric = {"answer", "count"}
    return pd.read_csv(
        path,
        dtype={c: str for c in header if c not in numeric},
        keep_default_na=False,
        na_values={c: [""] for c in header if c in numeric},
        **_EXACT_FLOATS,
    )


def _frames_library(data: Data, frames: FramesOption) -> str:
    """The library ``frames=`` asks for (``None``: the input's), checked before the release
    runs, so that nothing is spent on a release whose frames cannot be made."""
    if frames is None:
        return "polars" if _is_polars(data) else "pandas"
    if frames not in ("pandas", "polars"):
        raise DpqrError(
            f"frames={frames!r}: give \"pandas\", \"polars\" or None (the input's library; "
            "pandas for a path)"
        )
    if frames == "polars":
        try:
            import polars  # noqa: F401
        except ImportError as e:
            raise DpqrError(
                "frames=\"polars\": Polars is not installed (pip install polars)"
            ) from e
    return frames


def _bins_columns(schema: Optional[SchemaSpec]) -> set:
    """The schema's columns given by bin edges (their synthetic values are numbers drawn
    within a bin). The schema is the one the release has just read, so it parses."""
    if isinstance(schema, (str, os.PathLike)):
        with open(schema, encoding="utf-8") as f:
            schema = json.load(f)
    if not isinstance(schema, Mapping):
        return set()
    return {name for name, spec in schema.items() if isinstance(spec, Mapping) and "bins" in spec}


def _is_whole(values: pd.Series) -> bool:
    """Whether ``values`` are numbers, each missing or a whole number."""
    if not pd.api.types.is_numeric_dtype(values):
        return False
    present = values.dropna()
    return bool((present == present.round()).all())


def _like_pandas(read: pd.Series, text: pd.Series, like: pd.Series) -> pd.Series:
    """A synthetic column (``read`` as pandas parses it, ``text`` as written) in the type of
    the input column ``like`` where its values allow it; ``read`` otherwise."""
    dtype = like.dtype
    try:
        if isinstance(dtype, pd.CategoricalDtype):
            kind = dtype.categories.dtype
            source = text if pd.api.types.is_object_dtype(kind) or pd.api.types.is_string_dtype(kind) else read
            values = source.astype(kind)
            extra = [v for v in pd.unique(values.dropna()) if v not in dtype.categories]
            categories = list(dtype.categories) + extra
            return values.astype(pd.CategoricalDtype(categories, dtype.ordered))
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            # labels exactly as written (a label "01" stays "01")
            return text.astype(dtype)
        if pd.api.types.is_integer_dtype(dtype) and not _is_whole(read):
            # astype would truncate
            return read
        return read.astype(dtype)
    except (TypeError, ValueError):
        # e.g. integers with an empty (missing) cell: kept as read
        return read


def _like_polars(read: pd.Series, text: pd.Series, dtype: Any) -> Any:
    """A synthetic column as a Polars Series in the Polars type ``dtype`` of the input
    column where its values allow it (as :func:`_like_pandas` does for pandas); as read
    otherwise."""
    import polars as pl

    as_read = pl.from_pandas(read)
    if dtype == pl.String or dtype == pl.Categorical or isinstance(dtype, (pl.Categorical, pl.Enum)):
        labels = pl.from_pandas(text.astype(object)).cast(pl.String)
        if isinstance(dtype, pl.Enum):
            known = list(dtype.categories)
            extra = [v for v in labels.drop_nulls().unique(maintain_order=True) if v not in known]
            return labels.cast(pl.Enum(known + extra))
        return labels.cast(dtype)
    if dtype.is_integer() and not _is_whole(read):
        return as_read
    try:
        return as_read.cast(dtype)
    except Exception:  # noqa: BLE001 - Polars' cast errors differ by version: kept as read
        return as_read


def _read_synthetic(
    path: Path, like: Any, bins: set, library: str
) -> Any:
    """The synthetic records file as a DataFrame of ``library``: an empty cell (``missing``)
    is missing. With ``like`` (the input frame, pandas or Polars), each column takes the
    input column's type where its values allow it, except the ``bins`` columns, which keep
    the numbers drawn within their bins (floats, or text where a value is ``other``)."""
    read = pd.read_csv(path, keep_default_na=False, na_values=[""], **_EXACT_FLOATS)
    if like is not None:
        text = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    if _is_polars(like):
        import polars as pl

        schema = dict(like.schema)
        columns = []
        for column in read.columns:
            if column in schema and column not in bins:
                columns.append(_like_polars(read[column], text[column], schema[column]))
            else:
                columns.append(pl.from_pandas(read[column]))
        frame = pl.DataFrame([c.alias(str(n)) for c, n in zip(columns, read.columns)])
        return frame.to_pandas() if library == "pandas" else frame
    if isinstance(like, pd.DataFrame):
        for column in read.columns:
            if column in like.columns and column not in bins:
                read[column] = _like_pandas(read[column], text[column], like[column])
    if library == "polars":
        import polars as pl

        return pl.from_pandas(read)
    return read


def _attributes(attributes: Optional[Union[str, Sequence[str]]]) -> Optional[List[str]]:
    """``attributes=`` as ``--attributes`` takes it: a list of names (a string is split at
    its commas, as the flag's value is)."""
    if attributes is None:
        return None
    if isinstance(attributes, str):
        return attributes.split(",")
    names = list(attributes)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"attributes: give column names (strings), not {type(name).__name__} {name!r}"
            )
    return names


def _renamed(error: DpqrError, names: Mapping[str, str]) -> DpqrError:
    """``error`` with each temporary file's path in its message replaced by what the caller
    gave (``the DataFrame``), its exit status kept; ``error`` itself when none is named."""
    message = str(error)
    for path, name in names.items():
        message = message.replace(path, name)
    if message == str(error):
        return error
    renamed = DpqrError(message)
    renamed.exit_status = getattr(error, "exit_status", 2)
    return renamed


def release(
    data: Optional[Data] = None,
    *,
    dataset: Optional[str] = None,
    attributes: Optional[Union[str, Sequence[str]]] = None,
    mechanism: str = "adaptive-projection",
    workload: WorkloadSpec = "all-3way",
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    rho: Optional[float] = None,
    neighbouring: Optional[str] = None,
    schema: Optional[SchemaSpec] = None,
    seed: Optional[int] = None,
    post: Optional[str] = None,
    synthetic: Optional[bool] = None,
    rows: Optional[int] = None,
    workload_seed: int = 0,
    allow_large_delta: bool = False,
    delimiter: Optional[str] = None,
    ignore_extra_columns: bool = False,
    max_memory_mib: int = 4096,
    progress: ProgressOption = None,
    ledger: Optional[Union[str, "os.PathLike[str]"]] = None,
    ledger_dataset: Optional[str] = None,
    frames: FramesOption = None,
    **settings: Any,
) -> Release:
    """Release the answers to ``workload`` on ``data`` with ``mechanism`` under a budget, and
    synthetic records where the mechanism makes them: ``dpqr release`` from Python.

    ``data`` is a pandas or Polars DataFrame (handed to the pipeline as a temporary Parquet
    file, removed afterwards) or the path of a CSV, gzip CSV or Parquet file; ``schema`` its
    public schema (a dict, or the path of a schema JSON file: ``--domain``), required.
    Instead of both, ``dataset`` names a bundled table (``--dataset``: ``"adult"``,
    ``"nltcs"``, …, as ``dpqr datasets`` lists them), which comes with its domain.
    ``attributes`` keeps only these columns, in this order, before the workload is built
    (``--attributes``: a list of names, or one string of names separated by commas).

    ``mechanism`` is a name from :func:`mechanisms`, or ``"auto"`` (chosen from the workload's
    class and the budget's kind alone). The default, ``"adaptive-projection"``, picks the
    worst-fitted marginal table in rounds with the exponential mechanism (McSherry, Talwar
    2007), measures it with discrete Gaussian noise and re-fits a graphical model to every
    measurement (the iterative construction of Roth 2011 with the estimation of McKenna,
    Sheldon, Miklau 2019, in rounds like AIM, McKenna et al. 2022); its synthetic records are
    sampled from the model. The projection family follows Błasiok, Bun, Nikolov, Steinke 2019
    and Dwork, Nikolov, Talwar 2014, DualQuery Gaboardi et al. 2014, the polynomial release
    Thaler, Ullman, Vadhan 2012 (docs/references.md).

    The budget is ``epsilon`` alone (pure ε-DP), ``epsilon`` with ``delta`` ((ε, δ)-DP) or
    ``rho`` (ρ-zCDP), each accepted by the mechanisms listed for it; ``neighbouring`` is
    ``"add-remove"`` (the default where supported: n stays private) or ``"replace-one"``.
    ``workload`` is ``"all-Kway"``, ``"random-Kway:M"`` (drawn with ``workload_seed``), a list
    of tables such as ``[("age", "sex"), ("race",)]``, a workload JSON object or the path of a
    workload JSON file. Mechanism settings are keyword arguments (``rounds=20``, ``eta=0.4``,
    ``samples``, ``alpha``, ``tolerance``, ``max_iterations``, ``oracle``), checked by the
    mechanism's catalogue entry; ``post="simplex"`` projects each table onto the proportions
    where the mechanism offers it.

    ``synthetic``: ``None`` gives synthetic records when the mechanism makes them, ``True``
    refuses a mechanism that makes none, ``False`` skips them; ``rows=N`` writes ``N`` plain
    rows instead of weighted records (publishing ``N`` = n would publish n).

    ``seed`` is for tests and reproducible experiments ONLY: anyone who knows or guesses it
    can regenerate the noise and recover the exact counts. It is accepted as ``--seed`` is,
    with the same warning (a :class:`DpqrWarning`), and never written to any output. Without
    it the operating system seeds the noise.

    ``progress``: the release's progress on stderr, a tqdm bar (when tqdm is installed,
    otherwise one line rewritten in place) with the stage and its percentage, and no timing;
    by default only when stderr is a terminal, ``True`` always, ``False`` never (in a
    notebook, say), or a callable that receives every event as ``(kind, message, done,
    total)``.

    ``ledger``: a budget ledger (``dpqr ledger init``) the release is charged to — refused
    before any data is read if it would overspend the dataset's budget (a
    :class:`DpqrError` with ``exit_status`` 3), recorded before any noise is drawn —
    and ``ledger_dataset`` the ledger's dataset (``--ledger-dataset``). A DataFrame is copied
    to a new temporary file at every call, so it has no path the ledger could know it by:
    with a DataFrame ``ledger_dataset`` is required, and the ledger records the data as
    ``dataframe:NAME``. Give the same name for the same data every time: the ledger cannot
    tell that two frames hold the same records.

    ``frames``: the library of ``answers`` and ``synthetic`` — ``"pandas"``, ``"polars"``,
    or ``None`` (the default), the input's: Polars for a Polars frame, pandas for a pandas
    frame or a path. The synthetic columns take the input frame's column types either way.

    The interpreter lock is released while the release runs. Every refusal and failure
    raises :class:`DpqrError` with the message ``dpqr release`` prints for the same input;
    nothing else about the data is output beyond what the command line outputs.

    Ctrl-C (``KeyboardInterrupt``) stops the release at its next stopping point — between
    the pipeline's stages and between adaptive-projection's rounds; other mechanisms finish
    their run first — and raises ``KeyboardInterrupt`` saying whether the budget was
    charged: a spend recorded in ``ledger`` before the interrupt stays recorded (it is never
    refunded; the mechanism may have drawn noise with it). Nothing is returned or kept.
    """
    library = _frames_library(data, frames)
    options = dict(
        schema=schema,
        dataset=dataset,
        attributes=attributes,
        workload=workload,
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        neighbouring=neighbouring,
        post=post,
        seed=seed,
        settings=settings,
        synthetic=synthetic,
        rows=rows,
        workload_seed=workload_seed,
        allow_large_delta=allow_large_delta,
        delimiter=delimiter,
        ignore_extra_columns=ignore_extra_columns,
        max_memory_mib=max_memory_mib,
        ledger=ledger,
        ledger_dataset=ledger_dataset,
    )
    show = _progress.reporter(progress)
    if show is not None:
        options["progress"] = show
    with tempfile.TemporaryDirectory(prefix="dpqr-") as tmp:
        directory = Path(tmp)
        try:
            ran = _run(data, directory, options, header_only=False)
        finally:
            if isinstance(show, _progress.StderrProgress):
                show.close()
        for message in ran["warnings"]:
            warnings.warn(message, DpqrWarning, stacklevel=2)
        like = data if isinstance(data, pd.DataFrame) or _is_polars(data) else None
        answers = _read_answers(directory / "answers.csv")
        if library == "polars":
            import polars as pl

            answers = pl.from_pandas(answers)
        synthetic = None
        if ran["synthetic"]:
            synthetic = _read_synthetic(
                directory / "synthetic.csv", like, _bins_columns(schema), library
            )
        return Release(
            certificate=Certificate(**ran["certificate"]),
            answers=answers,
            synthetic=synthetic,
            report=json.loads((directory / "report.json").read_text(encoding="utf-8")),
            ledger_record=ran["ledger_record"],
        )


def _run(data: Data, directory: Path, options: Dict[str, Any], header_only: bool) -> Any:
    """One call of the pipeline: the data, schema and workload put into files in
    ``directory`` (with ``header_only``, a DataFrame's columns without its rows), the
    outputs named there, and ``_native.release`` called with ``options``; an error's
    temporary paths renamed to what the caller gave."""
    schema = options.pop("schema")
    dataset = options.pop("dataset")
    options["attributes"] = _attributes(options.pop("attributes"))
    data_path: Optional[Path] = None
    schema_path: Optional[Path] = None
    if dataset is None:
        if data is None:
            raise DpqrError(
                "data: give a pandas or Polars DataFrame, the path of a CSV, gzip CSV or "
                "Parquet file, or dataset=\"adult\" (a bundled table: `dpqr datasets` lists them)"
            )
        # a frame's columns without its rows (anything else is refused by _write_data)
        is_frame = isinstance(data, pd.DataFrame) or _is_polars(data)
        frame = data.head(0) if header_only and is_frame else data
        data_path, _ = _write_data(frame, directory)
        schema_path = _write_schema(schema, directory)
    elif data is not None:
        # as the command line refuses --data with --dataset
        raise DpqrError(
            f"dataset={dataset!r}: give the data or a bundled dataset, not both"
        )
    elif schema is not None:
        # as the command line refuses --domain without --data
        raise DpqrError(
            f"schema: the bundled dataset {dataset!r} comes with its own domain; give "
            "schema= with data only"
        )
    workload_text = _workload_spec(options.pop("workload"), directory)
    # the temporary files the package wrote, by what the caller gave
    written = {
        Path(workload_text): "the workload",
        directory / "answers.csv": "the answers",
        directory / "report.json": "the report",
        directory / "synthetic.csv": "the synthetic records",
    }
    if data_path is not None and schema_path is not None:
        written[data_path] = "the DataFrame"
        written[schema_path] = "the schema dict"
    names = {str(p): n for p, n in written.items() if p.parent == directory}
    try:
        ran = _native.release(
            data=data_path,
            schema=schema_path,
            dataset=dataset,
            workload=workload_text,
            answers=directory / "answers.csv",
            report=directory / "report.json",
            synthetic_out=directory / "synthetic.csv",
            labelled=True,
            data_is_a_frame=data is not None and not isinstance(data, (str, os.PathLike)),
            **options,
        )
    except DpqrError as e:
        raise _renamed(e, names) from None
    if "plan" in ran:
        text = ran["plan"]
        for path, name in names.items():
            text = text.replace(json.dumps(path)[1:-1], name)
        ran["plan"] = json.loads(text)
    return ran


def plan(
    data: Optional[Data] = None,
    *,
    dataset: Optional[str] = None,
    attributes: Optional[Union[str, Sequence[str]]] = None,
    mechanism: str = "adaptive-projection",
    workload: WorkloadSpec = "all-3way",
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    rho: Optional[float] = None,
    neighbouring: Optional[str] = None,
    schema: Optional[SchemaSpec] = None,
    seed: Optional[int] = None,
    post: Optional[str] = None,
    synthetic: Optional[bool] = None,
    rows: Optional[int] = None,
    workload_seed: int = 0,
    allow_large_delta: bool = False,
    delimiter: Optional[str] = None,
    ignore_extra_columns: bool = False,
    max_memory_mib: int = 4096,
    assume_n: Optional[int] = None,
    ledger: Optional[Union[str, "os.PathLike[str]"]] = None,
    ledger_dataset: Optional[str] = None,
    **settings: Any,
) -> Plan:
    """Plan the release :func:`release` would make with the same arguments, without making
    it: ``dpqr release --dry-run``. Every check a release makes before reading data is made
    (an input the release would refuse raises the same :class:`DpqrError`), then the plan
    is returned (:class:`Plan`): the guarantee, the settings, the workload's size and memory,
    the universe, the mechanism's checks, and the predicted error — the noise per count of
    the answer-perturbation baselines, the noise schedule of ``adaptive-projection``, or the
    error bound the mechanism's paper states (with ``assume_n``).

    No data is read and no budget is spent: of a DataFrame only the column names and types
    are handed over (an empty frame), of a file only its header is read. ``assume_n``
    (``--assume-n``) predicts for a table of that many records; it is an assumption, never
    read from the data (under add/remove neighbours n is private).
    """
    options = dict(
        schema=schema,
        dataset=dataset,
        attributes=attributes,
        workload=workload,
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        neighbouring=neighbouring,
        post=post,
        seed=seed,
        settings=settings,
        synthetic=synthetic,
        rows=rows,
        workload_seed=workload_seed,
        allow_large_delta=allow_large_delta,
        delimiter=delimiter,
        ignore_extra_columns=ignore_extra_columns,
        max_memory_mib=max_memory_mib,
        dry_run=True,
        assume_n=assume_n,
        ledger=ledger,
        ledger_dataset=ledger_dataset,
    )
    with tempfile.TemporaryDirectory(prefix="dpqr-") as tmp:
        ran = _run(data, Path(tmp), options, header_only=True)
    for message in ran["warnings"]:
        warnings.warn(message, DpqrWarning, stacklevel=2)
    fields = ran["plan"]
    certificate = fields["certificate"]
    if certificate["approx_equivalent"] is not None:
        certificate["approx_equivalent"] = tuple(certificate["approx_equivalent"])
    return Plan(
        certificate=Certificate(**certificate),
        lines=fields["lines"],
        count_std=fields.get("count_std"),
        prediction=fields.get("prediction"),
        settings=fields.get("settings"),
        workload=fields["workload"],
        queries=fields["queries"],
        touched_attributes=fields["touched_attributes"],
        memory_bytes=fields.get("memory_bytes"),
        memory_refused=fields.get("memory_refused"),
        universe_log10=fields.get("universe_log10"),
        checks_pass=fields.get("checks_pass"),
        checks_refusal=fields.get("checks_refusal"),
        auto_choice=fields.get("auto_choice"),
        synthetic=fields["synthetic"],
    )


# the NON-PRIVATE helpers, as ``dpqr.nonprivate`` (imported last: they use the names above)
from . import nonprivate  # noqa: E402

__all__.append("nonprivate")
