"""What the kit checks of a stage's own code, and how it says a mistake found there.

A stage class is checked when it is defined (:func:`check_definition`: its ``version``, a row
filter's ``reason``, its ``decision_keys``); what its methods return is checked as they return it
(:func:`checked_scores`, :func:`checked_drops`; a group stage's ``keys`` and ``removals``:
:mod:`pipelines.kit.group_checks`). Such a mistake is a :class:`StageError` (exit
code :data:`EXIT_STAGE`), whose message names the stage, the method and what to change. An error
raised inside a stage's method (:func:`call`) is one too for a stage curate does not ship, with
its traceback; in a stage curate ships (:data:`pipelines.stages.SHIPPED`) it stays what it is, a
bug in curate, with a note naming the stage and the method.
"""

from __future__ import annotations

import dataclasses
import re
import traceback
from typing import Any

import numpy as np
import pandas as pd

from curation.schema import DropReason, mark_kept

#: exit code of a :class:`StageError` (:data:`pipelines.exit_codes.EXIT_CODES`)
EXIT_STAGE = 13


class StageError(RuntimeError):
    """A stage broke the kit's contract, or a stage curate does not ship raised an error: ``message``
    names the stage, the method and what to change; ``trace`` is the traceback of the stage's own error."""

    def __init__(self, message: str, trace: str = "") -> None:
        super().__init__(message, trace)  # both travel from a Dask worker
        self.message, self.trace = message, trace

    def __str__(self) -> str:
        return self.message


class StageDefinitionError(StageError, TypeError):
    """A stage class refused when it is defined."""


def check_definition(cls: type) -> None:
    """Refuse a stage class whose ``version`` or ``decision_keys`` cannot work."""
    version = cls.__dict__.get("version", getattr(cls, "version", "1"))
    if not isinstance(version, str) or not re.fullmatch(r"\S+", version):
        raise StageDefinitionError(
            f"{cls.__name__}.version = {version!r}: a stage's version is a non-empty string without spaces, "
            f'e.g. version = "2" (it names the stage\'s outputs and cached steps)'
        )
    keys = getattr(cls, "decision_keys", ())
    if isinstance(keys, str):  # ("max_urls") without its comma is the string itself
        raise StageDefinitionError(
            f"{cls.__name__}.decision_keys = {keys!r} is a string, not a tuple of field names: "
            f'write decision_keys = ("{keys}",)'
        )
    config = getattr(cls, "config_cls", None)
    if dataclasses.is_dataclass(config):
        fields = [f.name for f in dataclasses.fields(config)]
        for key in getattr(cls, "decision_keys", ()):
            if key not in fields:
                raise StageDefinitionError(
                    f"{cls.__name__}.decision_keys names {key!r}, which is no field of {config.__name__}: "
                    f"name fields of {fields}"
                )


def check_reason(cls: type) -> None:
    """Refuse a row filter class whose ``reason`` is not a :class:`DropReason` member."""
    reason = getattr(cls, "reason", None)
    if not isinstance(reason, DropReason):
        said = " has no reason" if reason is None else f".reason = {reason!r} is not a DropReason member"
        raise StageDefinitionError(
            f"{cls.__name__}{said}: a row filter's reason is a member of DropReason in curation/schema.py "
            "(reason = DropReason.REPEATED_LINES); add a member there for a new reason"
        )


def shipped(stage: Any) -> bool:
    """Whether ``stage`` is one of the stages curate ships (an error inside it is a bug in curate)."""
    from pipelines.stages import SHIPPED

    name = getattr(stage, "name", None)
    return name in SHIPPED and type(stage).__module__ == f"pipelines.stages.{name}"


def stage_fault(stage: Any, message: str) -> Exception:
    """The error for ``message``, a check the runner makes of a whole stage's output (conservation,
    produced columns): a bug in curate for a stage curate ships, a :class:`StageError` for another."""
    return RuntimeError(message) if shipped(stage) else StageError(message)


def call(stage: Any, method: str, *args: Any) -> Any:
    """``stage.<method>(*args)``; an error it raises names the stage and the method (see the module docstring)."""
    try:
        return getattr(stage, method)(*args)
    except StageError:
        raise
    except Exception as exc:
        from pipelines.exit_codes import failure

        if failure(exc)[0] is not None:  # a failure curate knows (a judge's server that does not answer)
            raise
        if shipped(stage):
            if hasattr(exc, "add_note"):  # Python 3.11
                exc.add_note(f"in {stage.name}.{method}")
            raise
        raise StageError(
            f"{stage.name}.{method} raised {type(exc).__name__}: {exc} at {_where(stage, exc)}{_hint(stage, method, exc)}; "
            f"fix the stage's {method} (its traceback is above)",
            "".join(traceback.format_exception(exc)),
        ) from exc


def checked_scores(stage: Any, rows: pd.DataFrame, scored: Any) -> pd.DataFrame:
    """``scored``, what ``stage.score(rows, cfg)`` returned, as the kit stores it: ``doc_id`` and
    the ``produces`` columns with their dtypes; the columns it has beyond those in ``attrs["beyond_produces"]``."""
    name, produces = f"{stage.name}.score", stage.produces
    fix = f"return pd.DataFrame({{...}}, index=rows.index) with the columns of produces {list(produces)}"
    if not isinstance(scored, pd.DataFrame):
        raise StageError(f"{name} returned a {type(scored).__name__}, not a DataFrame: {fix}")
    if len(scored) != len(rows):
        raise StageError(f"{name} returned {len(scored)} rows for {len(rows)}: one row per row of `rows`; {fix}")
    if not scored.index.equals(rows.index) and not scored.index.equals(pd.RangeIndex(len(rows))):
        raise StageError(f"{name} returned its rows on another index than `rows`' (reordered or filtered?): {fix}")
    missing = [c for c in produces if c not in scored.columns]
    if missing:
        raise StageError(f"{name} returned no column {missing[0]!r}, which produces declares: {fix}")
    out = pd.DataFrame({"doc_id": rows["doc_id"].astype(str).to_numpy()})
    for column in produces:
        out[column] = scored[column].to_numpy()
    try:
        out = out.astype(dict(produces))
    except (TypeError, ValueError) as exc:
        column = next(c for c, d in produces.items() if not _casts(out[c], d))
        raise StageError(
            f"{name} returned column {column!r} as {scored[column].dtype}, which does not convert to the {produces[column]!r} "
            f"that produces declares ({type(exc).__name__}: {exc}): return values of that type (whole numbers for an "
            "integer type) or declare a type that holds them"
        ) from None
    out.attrs["beyond_produces"] = tuple(c for c in scored.columns if c not in produces)
    return out


def checked_drops(stage: Any, hit: Any, n: int) -> np.ndarray:
    """What ``stage.drops(scores, cfg)`` returned for ``n`` rows, as one boolean per row."""
    values = np.asarray(hit)
    if values.ndim != 1 or len(values) != n:
        got = f"a {type(hit).__name__}" if values.ndim != 1 else f"{len(values)} values"
        raise StageError(
            f"{stage.name}.drops returned {got} for {n} rows: return one True (drop) or False per row of `scores`, "
            'e.g. scores["n_urls"] > cfg.max_urls'
        )
    if pd.isna(values).any():
        raise StageError(
            f"{stage.name}.drops returned missing values, not True or False: "
            'return a boolean per row (fill missing scores first, e.g. (scores["x"] > 5).fillna(False))'
        )
    return values.astype(bool)


def _casts(values: pd.Series, dtype: Any) -> bool:
    try:
        values.astype(dtype)
    except (TypeError, ValueError):
        return False
    return True


def _where(stage: Any, exc: BaseException) -> str:
    """The file and line of the stage's own code where ``exc`` came from (the deepest frame in a
    module of the stage's classes), else where it was raised."""
    import sys

    from pipelines.exit_codes import where

    files = {getattr(sys.modules.get(c.__module__), "__file__", None) for c in type(stage).__mro__}
    files -= {
        getattr(sys.modules.get(__name__), "__file__", None),
        getattr(sys.modules.get("pipelines.kit.shapes"), "__file__", None),
    }
    found = [
        f"{frame.filename}:{frame.lineno}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename in files
    ]
    return found[-1] if found else where(exc)


def _hint(stage: Any, method: str, exc: Exception) -> str:
    """What an error of a stage's method says about the kit (a column ``score`` reads that the kit did not read)."""
    reads = getattr(stage, "score_columns", None)
    if (
        method == "score"
        and isinstance(exc, KeyError)
        and reads is not None
        and exc.args
        and exc.args[0] not in ("doc_id", "source", *reads)
    ):
        return (
            f" (score gets only the columns of score_columns {tuple(reads)} besides doc_id and source: "
            f"add {exc.args[0]!r} to score_columns)"
        )
    return ""


def score_rows(_number: int, rows: pd.DataFrame, stage: Any, cfg: Any) -> pd.DataFrame:
    """The ``scores`` of a row slice: ``doc_id`` and the produced columns of its rows of the stage's sources."""
    sources = stage.sources(cfg)
    scope = rows[rows["source"].isin(sources)] if sources is not None else rows
    if len(scope):
        return checked_scores(stage, scope, call(stage, "score", scope, cfg))
    out = pd.DataFrame({"doc_id": scope["doc_id"].astype(str).to_numpy()})
    for column, dtype in stage.produces.items():
        out[column] = pd.Series(dtype=dtype)
    return out.astype(dict(stage.produces))


def beyond_produces(frame: pd.DataFrame) -> tuple[str, ...]:
    """The columns ``score`` returned beyond ``produces`` for the rows of ``frame``."""
    return frame.attrs.get("beyond_produces", ())


def annotate_part(number: int, df: pd.DataFrame, stage: Any, state: Any, cfg: Any, columns: list[str]) -> pd.DataFrame:
    return _columns(stage, "annotate", call(stage, "annotate", number, df, state, cfg), columns)


def decide_part(number: int, df: pd.DataFrame, stage: Any, state: Any, cfg: Any, columns: list[str]) -> pd.DataFrame:
    return _columns(stage, "decide", mark_kept(call(stage, "decide", number, df, state, cfg)), columns)


def _columns(stage: Any, method: str, df: Any, columns: list[str]) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise StageError(f"{stage.name}.{method} returned a {type(df).__name__}, not the partition's DataFrame")
    if missing := [c for c in columns if c not in df.columns]:
        raise StageError(
            f"{stage.name}.{method} returned no column {missing[0]!r}: return the partition with every column "
            f"it was given and the produced ones ({columns})"
        )
    return df[columns]
