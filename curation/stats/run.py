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

    @property
    def recorded(self) -> dict[str, Any]:
        """What the run recorded: ``run.json``, else the ``run.progress.json`` of a run that stopped ({} if neither)."""
        return self.record or (self.state.record if self.state is not None else {})

    @property
    def is_stage_folder(self) -> bool:
        """Whether this is one stage folder (``curate <stage> --output DIR``), not a run folder:
        it records neither a recipe nor the stages before it."""
        return (self.path / "_SUCCESS").exists() and (self.path / "stats.json").exists()

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
    """A sentence for a view of a stage that did not run (None when it ran), saying why from what
    the folder records: left out as stale, disabled in the recipe, the run stopped before it, or a
    stage folder that holds one stage only.

    >>> # missing_stage_note(run, "web_quality")
    >>> # → 'web_quality did not run in sample: it is disabled in the recipe (web_quality.enabled=false; …)'
    """
    if run.has(stage):
        return None
    stale = [f for f in run.stale if f.split("_", 1)[-1] == stage]
    if stale:
        why = (run.state.stale.get(stale[0]) if run.state is not None else None) or "not current"
        return (f"{stale[0]} of {run.name} is left out: {why}; it is not this run's output, so it is not shown "
                f"(run the recipe again into {run.name} to bring it up to date)")
    if run.is_stage_folder:
        return (f"{stage} is not in {run.name}, which is one stage folder (written by `curate {run.stages[0].name}`) that holds "
                f"that stage's output only; the stages before it, {stage} among them if it ran, are in the folder its input came from")
    record = run.recorded
    planned = [s.get("name") for s in record.get("stages") or [] if isinstance(s, dict)]
    section = (record.get("recipe") or {}).get("stages", {}).get(stage)
    if isinstance(section, dict) and section.get("enabled") is False or (planned and stage not in planned):
        return (f"{stage} did not run in {run.name}: it is disabled in the recipe ({stage}.enabled=false; "
                f"set {stage}.enabled=true to run it)")
    status = run.state.status if run.state is not None else "unrecorded"
    if stage in planned and status != "complete":
        error = f": {run.state.error}" if run.state is not None and run.state.error else ""
        how = "is still running or was killed" if status == "running" else f"stopped ({status}{error})"
        return (f"{stage} did not run in {run.name}: the run {how} before {stage} finished "
                "(run the same `curate run` command again to finish it)")
    if not record:
        return (f"{stage} did not run in {run.name}: there is no folder of it, and the folder has no run record "
                "(run.json) to say whether the recipe enables it (stages written one at a time with `curate <stage>`?)")
    return (f"{stage} did not run in {run.name}: its folder is missing although the recipe enables it "
            "(run the same `curate run` command again; a failure is in the run's log)")


def run_summary(run: Run, with_state: bool = True) -> str:
    """One line on what the folder records: the recipe, the time, and how the run stands. A run that
    stopped has its recipe in ``run.progress.json``; a stage folder records no recipe, so it says so
    rather than showing blanks. ``with_state``: add how an unfinished run stands (the report notes it apart)."""
    if run.is_stage_folder:
        st = run.stages[0]
        return (f"{run.path}: one stage folder ({st.name}, written by `curate {st.name}`; {st.stats.get('seconds', '?')} s); "
                "recipe and run time: not recorded (a stage folder keeps its stage's config only, below)")
    record = run.recorded
    recipe = record.get("recipe") or {}
    name = f"{recipe['name']} ({recipe.get('recipe_path') or 'path not recorded'})" if recipe.get("name") else "not recorded"
    status = run.state.status if run.state is not None else "complete"
    seconds = record.get("seconds")
    took = "time not recorded" if seconds is None else f"{seconds} s in total" if status == "complete" else f"{seconds} s before it stopped"
    reused = [st for st in record.get("stages") or [] if st.get("skipped")]
    if seconds is not None and reused:  # the last invocation's time; the stages it found up to date ran before it
        earlier = sum(float(st.get("seconds") or 0.0) for st in reused)
        took = (f"{seconds} s in its last invocation, which reused {len(reused)} stage(s) up to date from earlier ones "
                f"(they took {earlier:.1f} s when they ran)")
        after = {st["input_unchanged_after"]: st["name"] for st in reused if st.get("input_unchanged_after")}
        if after:  # made again, a stage's output came out as before: the stages after it read what they were made from
            took += "; " + "; ".join(f"{sum(st.get('input_unchanged_after') == a for st in reused)} of them because {a} was made "
                                     "again with its output as before" for a in after)
    line = f"{run.path}: recipe {name} · {took}"
    if status == "unrecorded" and not record:
        line += (" · no run record (run.json or run.progress.json): stages written one at a time with `curate <stage>`, "
                 "or a run that stopped before it recorded anything")
    elif status != "complete" and run.state is not None and with_state:
        line += f" · {run.state.describe()}"
    return line
