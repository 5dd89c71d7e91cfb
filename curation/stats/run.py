"""Run statistics for notebooks and reports: read what the stages wrote, recompute nothing.

>>> # run = open_run("runs/sample")
>>> # funnel(run)                    # documents and tokens in / kept / dropped per stage
>>> # drop_reasons(run, by_source=True)
>>> # drop_examples(run, "exact_duplicate", n=3)   # with the kept duplicate's preview

Every view is a plain pandas frame built from ``stats.json``, ``ledger/``, ``docs/``,
``artifacts/`` and the mixture manifests of a run folder. A view of a stage that did not
run returns an empty frame; :func:`missing_stage_note` says so in words. Score, level,
mixture, calibration and cluster views live in ``stats_scores``, ``stats_mixture`` and
``stats_dedup``; run comparison in ``stats_compare``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

log = logging.getLogger(__name__)

#: Ledger detail keys that name the document a duplicate was removed in favour of.
KEPT_KEYS = ("duplicate_of", "kept", "kept_id", "keeper", "kept_doc_id")

FUNNEL_COLUMNS = ["docs_in", "docs_kept", "docs_dropped", "tokens_in", "tokens_kept", "tokens_dropped"]


@dataclasses.dataclass(frozen=True)
class StageOutput:
    """One finished stage folder of a run (``NN_<stage>/`` with ``_SUCCESS``)."""

    name: str
    folder: Path
    stats: dict[str, Any]

    @property
    def extra(self) -> dict[str, Any]:
        return self.stats.get("extra") or {}

    def artifact(self, name: str) -> Path | None:
        """``artifacts/<name>`` of this stage, if the stage wrote it."""
        path = self.folder / "artifacts" / name
        return path if path.exists() else None


@dataclasses.dataclass
class Run:
    """A run folder opened for reading: finished stages in run order, run.json, manifests.

    >>> # run = open_run("runs/sample"); [s.name for s in run.stages]
    """

    path: Path
    stages: list[StageOutput]
    record: dict[str, Any]
    stale: list[str] = dataclasses.field(default_factory=list)  #: folders left out: their input is not this run's output
    _cache: dict[Any, pd.DataFrame] = dataclasses.field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.path.name

    def stage(self, name: str) -> StageOutput | None:
        return next((s for s in self.stages if s.name == name), None)

    def has(self, name: str) -> bool:
        return self.stage(name) is not None

    def ledger(self, stage: str | None = None, columns: list[str] | None = None) -> pd.DataFrame:
        """Ledger rows of one stage (or every stage, in run order), with a ``stage`` column."""
        names = [stage] if stage else [s.name for s in self.stages]
        frames = []
        for name in names:
            out = self.stage(name)
            if out is None:
                continue
            key = ("ledger", name, tuple(columns) if columns else None)
            if key not in self._cache:
                frame = read_parts(out.folder / "ledger", columns)
                frame["stage"] = name
                self._cache[key] = frame
            frames.append(self._cache[key])
        if not frames:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in ["doc_id", "stage", "reason", "detail", "source", "n_tokens", "preview"]})
        return pd.concat(frames, ignore_index=True)

    def docs(self, stage: str, columns: list[str] | None = None, ids: Iterable[str] | None = None) -> pd.DataFrame:
        """Kept documents of ``stage``; only ``columns`` that exist; only ``ids`` when given."""
        out = self.stage(stage)
        if out is None:
            return pd.DataFrame()
        if ids is not None:
            return read_parts(out.folder / "docs", columns, ids=list(ids))
        key = ("docs", stage, tuple(columns) if columns else None)
        if key not in self._cache:
            self._cache[key] = read_parts(out.folder / "docs", columns)
        return self._cache[key]

    def doc_columns(self, stage: str) -> list[str]:
        """Column names of a stage's ``docs/`` (from the Parquet footer, no data read)."""
        out = self.stage(stage)
        files = sorted((out.folder / "docs").glob("part-*.parquet")) if out else []
        return list(pq.read_schema(files[0]).names) if files else []


def open_run(path: str | Path) -> Run:
    """Open a run folder written by ``curate run`` (finished stages only, in run order).

    A single stage folder (``curate <stage> --output DIR``) opens as a run of that one stage.

    >>> # open_run("runs/sample").stages[0].name
    """
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is not a run folder; create one with `curate run RECIPE --input … --output {path}`")
    if (path / "_SUCCESS").exists() and (path / "stats.json").exists():  # one stage folder (`curate <stage>`)
        stats = json.loads((path / "stats.json").read_text())
        return Run(path, [StageOutput(stats.get("stage") or path.name.split("_", 1)[-1], path, stats)], {})
    stages, stale = [], []
    outputs: set[str] = set()  # output fingerprints of the stages kept so far
    for child in sorted(path.iterdir()):
        if not (child.is_dir() and child.name[:2].isdigit() and "_" in child.name):
            continue
        stats_path = child / "stats.json"
        if not ((child / "_SUCCESS").exists() and stats_path.exists()):
            log.warning("%s: not finished (no _SUCCESS or stats.json), left out", child)
            continue
        marker = json.loads((child / "_SUCCESS").read_text() or "{}")
        # A folder whose input is no earlier stage's current output is left over from an older
        # run (e.g. a later stage failed after an earlier one was re-run): its numbers are stale.
        if stages and marker.get("input_fingerprint") and outputs and marker["input_fingerprint"] not in outputs:
            log.warning("%s: its input is not this run's output of an earlier stage (left over from an older run), left out", child)
            stale.append(child.name)
            continue
        outputs.add(str(marker.get("output_fingerprint")))
        stats = json.loads(stats_path.read_text())
        stages.append(StageOutput(stats.get("stage") or child.name.split("_", 1)[1], child, stats))
    if not stages:
        raise FileNotFoundError(f"{path} has no finished stage folders (NN_<stage>/ with _SUCCESS and stats.json)")
    record_path = path / "run.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    return Run(path, stages, record, stale)


def read_parts(folder: Path, columns: list[str] | None = None, ids: list[str] | None = None) -> pd.DataFrame:
    """Concatenate ``part-*.parquet`` of ``folder``; absent ``columns`` are left out, not errors."""
    files = sorted(Path(folder).glob("part-*.parquet"))
    tables = []
    for f in files:
        names = pq.read_schema(f).names
        cols = [c for c in columns if c in names] if columns else None
        filters = [("doc_id", "in", ids)] if ids is not None and "doc_id" in names else None
        tables.append(pq.read_table(f, columns=cols, filters=filters))
    if not tables:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns or []})
    table = pa.concat_tables(tables, promote_options="permissive")
    return table.to_pandas()


def missing_stage_note(run: Run, stage: str) -> str | None:
    """A sentence for a view of a stage that did not run (None when it ran).

    >>> # missing_stage_note(run, "web_quality")
    >>> # → 'web_quality did not run in sample or did not finish (enable it with web_quality.enabled=true; …)'
    """
    if run.has(stage):
        return None
    return f"{stage} did not run in {run.name} or did not finish (enable it with {stage}.enabled=true; a failure is in the run's log)"


def parse_detail(detail: Any) -> dict[str, Any]:
    """A ledger ``detail`` JSON string as a dict ({} when null or not JSON).

    >>> parse_detail('{"duplicate_of": "a"}')
    {'duplicate_of': 'a'}
    """
    if not isinstance(detail, str) or not detail:
        return {}
    try:
        value = json.loads(detail)
    except json.JSONDecodeError:
        return {"detail": detail}
    return value if isinstance(value, dict) else {"detail": value}


def kept_id(detail: dict[str, Any]) -> str | None:
    """The kept document a removed duplicate points to, whatever key its stage used."""
    for key in KEPT_KEYS:
        value = detail.get(key)
        if isinstance(value, str):
            return value
    return None


def _totals(block: dict[str, Any] | None) -> tuple[int, int]:
    block = block or {}
    return int(block.get("documents", 0)), int(block.get("tokens", 0))


def funnel(run: Run, by_source: bool = False) -> pd.DataFrame:
    """Documents and tokens in / kept / dropped per stage (and source), from each ``stats.json``.

    Columns: ``stage``, [``source``], ``docs_in``, ``docs_kept``, ``docs_dropped``, ``tokens_in``,
    ``tokens_kept``, ``tokens_dropped``, ``seconds``.
    """
    rows = []
    for s in run.stages:
        blocks = s.stats.get("by_source", {}).items() if by_source else [(None, s.stats)]
        for source, block in blocks:
            (di, ti), (dk, tk), (dd, td) = _totals(block.get("in")), _totals(block.get("kept")), _totals(block.get("dropped"))
            row = {"stage": s.name, "docs_in": di, "docs_kept": dk, "docs_dropped": dd, "tokens_in": ti, "tokens_kept": tk, "tokens_dropped": td}
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
                         "tokens_in": ti, "tokens_kept": tk, "tokens_dropped": td})
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


def final_sources(run: Run) -> pd.DataFrame:
    """Documents and tokens per source that survive the last pre-mixture stage."""
    stages = [s for s in run.stages if s.name != "mixture"] or run.stages
    last = stages[-1]
    rows = [
        {"source": src, "documents": _totals(b.get("kept"))[0], "tokens": _totals(b.get("kept"))[1]}
        for src, b in sorted(last.stats.get("by_source", {}).items())
    ]
    return pd.DataFrame(rows, columns=["source", "documents", "tokens"])


def drop_examples(
    run: Run, reason: str, n: int = 5, stage: str | None = None, source: str | None = None, seed: int = 0
) -> pd.DataFrame:
    """A deterministic sample of ``n`` ledger rows with ``reason``, with the kept duplicate's preview.

    Columns: ``stage``, ``doc_id``, ``source``, ``n_tokens``, ``preview``, ``detail`` (dict),
    ``kept_id`` and ``kept_preview`` (the document a duplicate lost to, read from that stage's
    ``docs/``; null for reasons that are not duplicates).
    """
    ledger = run.ledger(stage)
    rows = ledger[ledger["reason"] == reason]
    if source is not None:
        rows = rows[rows["source"] == source]
    if len(rows) > n:
        rows = rows.sample(n=n, random_state=seed)
    rows = rows.sort_values(["stage", "doc_id"]).reset_index(drop=True)
    details = [parse_detail(d) for d in rows["detail"]]
    out = pd.DataFrame(
        {
            "stage": rows["stage"].astype(object),
            "doc_id": rows["doc_id"].astype(object),
            "source": rows["source"].astype(object),
            "n_tokens": rows["n_tokens"].astype("int64"),
            "preview": rows["preview"].astype(object) if "preview" in rows else None,
            "detail": details,
            "kept_id": [kept_id(d) for d in details],
        }
    )
    out["kept_preview"] = _kept_previews(run, out)
    return out


def _kept_previews(run: Run, rows: pd.DataFrame) -> list[str | None]:
    previews: dict[tuple[str, str], str] = {}
    for stage_name, group in rows.groupby("stage"):
        ids = sorted({i for i in group["kept_id"] if isinstance(i, str)})
        if not ids:
            continue
        found = run.docs(str(stage_name), ["doc_id", "text"], ids=ids)
        for doc_id, text in zip(found.get("doc_id", []), found.get("text", []), strict=True):
            previews[(str(stage_name), doc_id)] = text[:300] if isinstance(text, str) else None
    return [previews.get((s, k)) if isinstance(k, str) else None for s, k in zip(rows["stage"], rows["kept_id"], strict=True)]


def reason_examples(run: Run, n: int = 3, seed: int = 0) -> dict[tuple[str, str], pd.DataFrame]:
    """``drop_examples`` for every (stage, reason) of the run, in funnel order."""
    out = {}
    for row in drop_reasons(run).itertuples():
        out[(row.stage, row.reason)] = drop_examples(run, row.reason, n=n, stage=row.stage, seed=seed)
    return out
