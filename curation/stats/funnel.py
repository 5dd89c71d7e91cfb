"""The funnel: documents and tokens in / kept / dropped per stage (and source, language, reason).

Read from each stage's ``stats.json`` (the runner's counts), never recomputed.

>>> # from curation.stats.run import open_run
>>> # funnel(open_run("runs/sample"))          # one row per stage
>>> # drop_reasons(open_run("runs/sample"), by_source=True)
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curation.stats.run import Run

#: ``tokens_recounted``: tokens a stage counted again in the documents it was given (``code_web``
#: counts the pages it re-parses), so that ``tokens_in + tokens_recounted = tokens_kept +
#: tokens_dropped`` and each stage's ``tokens_in`` is the previous stage's ``tokens_kept``
FUNNEL_COLUMNS = ["docs_in", "docs_kept", "docs_dropped", "tokens_in", "tokens_kept", "tokens_dropped", "tokens_recounted"]


def _totals(block: dict[str, Any] | None) -> tuple[int, int]:
    block = block or {}
    return int(block.get("documents", 0)), int(block.get("tokens", 0))


def _recounted(block: dict[str, Any]) -> int:
    return int((block.get("recounted") or {}).get("tokens", 0))


def funnel(run: Run, by_source: bool = False) -> pd.DataFrame:
    """Documents and tokens in / kept / dropped per stage (and source), from each ``stats.json``.

    Columns: ``stage``, [``source``], ``docs_in``, ``docs_kept``, ``docs_dropped``, ``tokens_in``,
    ``tokens_kept``, ``tokens_dropped``, ``tokens_recounted``, ``seconds``.
    """
    rows = []
    for s in run.stages:
        blocks = s.stats.get("by_source", {}).items() if by_source else [(None, s.stats)]
        for source, block in blocks:
            (di, ti), (dk, tk), (dd, td) = _totals(block.get("in")), _totals(block.get("kept")), _totals(block.get("dropped"))
            row = {"stage": s.name, "docs_in": di, "docs_kept": dk, "docs_dropped": dd, "tokens_in": ti, "tokens_kept": tk, "tokens_dropped": td,
                   "tokens_recounted": _recounted(block)}
            if by_source:
                row["source"] = source
            else:
                row["seconds"] = float(s.stats.get("seconds") or 0.0)
            rows.append(row)
    cols = ["stage", "source", *FUNNEL_COLUMNS] if by_source else ["stage", *FUNNEL_COLUMNS, "seconds"]
    return pd.DataFrame(rows, columns=cols)


def funnel_by_lang(run: Run) -> pd.DataFrame:
    """Documents and tokens in / kept / dropped per stage and natural language (``lang``, set at ingest).

    Columns: ``stage``, ``lang``, then the :func:`funnel` counts. Runs made before the language
    column existed have no ``by_lang`` block and give an empty frame.
    """
    rows = []
    for s in run.stages:
        for lang, block in sorted(s.stats.get("by_lang", {}).items()):
            (di, ti), (dk, tk), (dd, td) = _totals(block.get("in")), _totals(block.get("kept")), _totals(block.get("dropped"))
            rows.append({"stage": s.name, "lang": lang, "docs_in": di, "docs_kept": dk, "docs_dropped": dd,
                         "tokens_in": ti, "tokens_kept": tk, "tokens_dropped": td, "tokens_recounted": _recounted(block)})
    return pd.DataFrame(rows, columns=["stage", "lang", *FUNNEL_COLUMNS])


def drop_reasons(run: Run, by_source: bool = False) -> pd.DataFrame:
    """Documents and tokens dropped per stage, [source] and reason, from each ``stats.json``."""
    rows = []
    for s in run.stages:
        blocks = s.stats.get("by_source", {}).items() if by_source else [(None, s.stats)]
        for source, block in blocks:
            for reason, counts in sorted(block.get("dropped_by_reason", {}).items()):
                docs, tokens = _totals(counts)
                row = {"stage": s.name, "reason": reason, "documents": docs, "tokens": tokens}
                if by_source:
                    row["source"] = source
                rows.append(row)
    cols = ["stage", "source", "reason", "documents", "tokens"] if by_source else ["stage", "reason", "documents", "tokens"]
    return pd.DataFrame(rows, columns=cols)
