"""Run statistics for notebooks and reports: open a run folder, read what the stages wrote, recompute nothing.

>>> # run = open_run("runs/sample")
>>> # [s.name for s in run.stages], run.ledger("exact_dedup"), run.docs("mixture", ["doc_id"])

Every view is a plain pandas frame built from ``stats.json``, ``ledger/``, ``docs/``,
``artifacts/`` and the mixture manifests of a run folder. A view of a stage that did not
run returns an empty frame; :func:`missing_stage_note` says so in words. The funnel and drop
reasons live in :mod:`.funnel`, ledger details and examples of dropped documents in
:mod:`.drops`; score, level, mixture, calibration and cluster views in :mod:`.scores`,
:mod:`.edu`, :mod:`.mixture` and :mod:`.dedup`; run comparison in :mod:`.compare`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curation.errors import DAMAGED_HINT, DamagedFileError, read_json_file

log = logging.getLogger(__name__)

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
    stale: list[str] = dataclasses.field(default_factory=list)  #: folders left out: not this run's current output
    state: Any = None  #: the run's :class:`~curation.stats.run_state.RunState` (finished or not, why stages were left out)
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
        stats = read_json_file(path / "stats.json")
        return Run(path, [StageOutput(stats.get("stage") or path.name.split("_", 1)[-1], path, stats)], {})
    from curation.stats.run_state import run_state

    state = run_state(path)
    for name, why in sorted(state.stale.items()):
        log.warning("%s: left out: %s", path / name, why)
    stages = []
    for child in state.current:
        stats_path = child / "stats.json"
        if not stats_path.exists():
            log.warning("%s: not finished (no stats.json), left out", child)
            continue
        stats = read_json_file(stats_path)
        stages.append(StageOutput(stats.get("stage") or child.name.split("_", 1)[1], child, stats))
    if not stages:
        raise FileNotFoundError(f"{path} has no finished stage folders (NN_<stage>/ with _SUCCESS and stats.json)")
    record_path = path / "run.json"
    record = read_json_file(record_path) if record_path.exists() else {}
    return Run(path, stages, record, sorted(state.stale), state)


def read_parts(folder: Path, columns: list[str] | None = None, ids: list[str] | None = None) -> pd.DataFrame:
    """Concatenate ``part-*.parquet`` of ``folder``; absent ``columns`` are left out, not errors."""
    files = sorted(Path(folder).glob("part-*.parquet"))
    tables = []
    for f in files:
        try:
            names = pq.read_schema(f).names
            cols = [c for c in columns if c in names] if columns else None
            filters = [("doc_id", "in", ids)] if ids is not None and "doc_id" in names else None
            tables.append(pq.read_table(f, columns=cols, filters=filters))
        except pa.ArrowException as exc:
            raise DamagedFileError(f"{f} cannot be read as Parquet ({exc}); {DAMAGED_HINT}") from None
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
    stale = [f for f in run.stale if f.split("_", 1)[-1] == stage]
    if stale:
        why = (run.state.stale.get(stale[0]) if run.state is not None else None) or "not current"
        return (f"{stale[0]} of {run.name} is left out: {why}; it is not this run's output, so it is not shown "
                f"(run the recipe again into {run.name} to bring it up to date)")
    return f"{stage} did not run in {run.name} or did not finish (enable it with {stage}.enabled=true; a failure is in the run's log)"
