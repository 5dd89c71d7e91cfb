"""What every export shares: the finished run it reads, the shards it reads them from, the folder it writes.

An export reads only a finished run (``run.json`` written, the mixture's ``_SUCCESS`` and files as
recorded) and every shard it reads is checked against its manifest's sha256 on the way; anything
else is one line and exit code 4, with nothing written. It writes into ``.<output>.inprogress``
beside the output folder and renames it into place when every phase is done, so an interrupted
export leaves nothing that loads as complete; an existing output folder is replaced only when its
``_SUCCESS`` says curate wrote it (the rules of every ``curate`` command), and an earlier export's
phases are kept or refused, never removed without a word (:mod:`pipelines.exports.earlier`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation.config import ConfigError
from curation.errors import read_json_file
from curation.ingest.inputs import InputError
from curation.mixture.manifest_check import validate_schema
from pipelines.io import write_json
from pipelines.marker import MARKER, WRITER, check_files, file_records, read_marker
from pipelines.safety import check_overlap, check_replaceable, folder_lock, swap_into_place

#: Columns an export reads from a shard.
SHARD_COLUMNS = ["doc_id", "copy", "copies", "text", "group", "source", "n_tokens"]


@dataclasses.dataclass(frozen=True)
class RunExport:
    """A finished run's mixture, as an export reads it."""

    run_dir: Path
    stage_dir: Path
    manifests: dict[str, dict[str, Any]]
    #: a mixture folder given as it is that is not the current output of its run: why (:func:`stale_mixture`)
    stale: str | None = None

    @property
    def tokenizer(self) -> str:
        names = {m["tokenizer"] for m in self.manifests.values()}
        if len(names) != 1:
            raise InputError(f"{self.stage_dir}: the manifests count with different tokenizers {sorted(names)}")
        return names.pop()


@dataclasses.dataclass(frozen=True)
class ShardJob:
    """One shard of one phase: what a task reads (paths relative to the mixture folder, with their sha256)."""

    phase: str
    group: str
    number: int
    path: str
    sha256: str
    bytes: int
    packing_path: str | None = None
    packing_sha256: str | None = None

    @property
    def where(self) -> str:
        """How an error names the shard: its phase and path."""
        return f"phase {self.phase}, shard {self.path}"

    @property
    def prefix(self) -> str:
        """``<phase>/<group>/part-NNNNN``: where the shard's export goes (its path names its group)."""
        return f"{self.phase}/{self.group}/part-{self.number:05d}"


def open_run(run_dir: Path, phases: list[str] | None = None) -> RunExport:
    """The finished run at ``run_dir`` (or the folder of a mixture stage run alone) and the manifests
    of ``phases`` (all by default).

    Raises :class:`InputError` (exit 4) for a run that did not finish, a mixture folder whose files
    are not as recorded, or a manifest that does not match its schema; ``ValueError`` (exit 2)
    for an unknown phase.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"{run_dir} is not a folder; give the run folder that `curate run` wrote")
    own = read_marker(run_dir)
    stale = None
    if own and own.get("stage") == "mixture":  # `curate mixture --output DIR`: the stage's folder is what an export reads
        stage_dir, marker = run_dir, own
        stale = stale_mixture(stage_dir, own)
    else:
        stage_dir, marker = _finished_mixture(run_dir, own)
    damage = check_files(stage_dir, marker)
    if damage:
        raise InputError(f"{stage_dir}: {damage[0]}; the run's output changed since it was written: re-run it, then export")
    manifests = {}
    for path in sorted((stage_dir / "manifests").glob("*.json")):
        manifest = read_json_file(path)
        errors = validate_schema(manifest)
        if errors:
            raise InputError(f"{path} does not match the manifest schema ({errors[0]}); re-run the mixture with this version of curate")
        manifests[manifest["phase"]] = manifest
    unknown = sorted(set(phases or []) - set(manifests))
    if unknown:
        raise ConfigError(f"--phase {unknown[0]}: the run has no such phase; its phases are {', '.join(manifests)}")
    chosen = {p: m for p, m in manifests.items() if not phases or p in phases}
    return RunExport(run_dir, stage_dir, chosen, stale)


def stale_mixture(stage_dir: Path, marker: dict[str, Any]) -> str | None:
    """Why a mixture folder given as it is (``curate export FORMAT RUN/80_mixture``) is not made from
    the current output of the stages before it, or None. In the folder around it, the check ``export
    RUN`` refuses on and ``curate verify`` fails (:func:`curation.stats.run_state.run_state`; for a
    folder of stages run one at a time, each made from the one before), less a mixture re-run alone
    (``made with another config``: exported as it is, on purpose); for a mixture folder with no
    stage folder beside it, the folder its marker says it was made from holding another output since. The export goes on and says so: the folder's
    files are checked against its own manifests, so it exports what they describe."""
    from curation.stats.run_state import run_state

    run = stage_dir.parent
    state = run_state(run)
    why = state.stale.get(stage_dir.name)
    if why and not why.startswith("made with another config"):
        remedy = ("re-run the same `curate run` command, then export the run folder" if state.status != "unrecorded" else
                  f"re-run the stages after the one made again, in order, into {run}, then export {stage_dir}")
        return (
            f"{stage_dir} is not the current output of {run} ({upstream_cause(state, stage_dir, why)}; "
            f"`curate verify {run}` says which): it is exported as it is, as its manifests describe it; "
            f"for the current output, {remedy}"
        )
    alone = not state.stale and all(p == stage_dir for p in state.current)  # no stage folder beside it
    source = marker.get("input") if alone else None
    now = read_marker(Path(source)) if isinstance(source, str) and source else None
    if now and now.get("output_fingerprint") != marker.get("input_fingerprint"):
        return (f"{stage_dir} was made from {source}, which holds another output since (it was made again): it is "
                f"exported as it is; for the current output, re-run the mixture from {source}, then export it")
    return None


def upstream_cause(state: Any, stage_dir: Path, why: str) -> str:
    """Why the stages before the mixture at ``stage_dir`` are not the run's current output, from
    :func:`~curation.stats.run_state.run_state`, in the words of ``curate verify``: the first stage of
    the run's record that is not current, and why (deleted, unfinished, made again); ``why``, the
    mixture's own reason, where none is."""
    for name in state.pending:
        folder = state.path / name
        if folder == stage_dir:
            break
        if not folder.is_dir():
            return f"an earlier stage is not current: {name} is listed in run.json but missing (removed since the run)"
        if name not in state.stale:
            return f"an earlier stage is not current: {name} did not finish (no _SUCCESS)"
        return f"an earlier stage is not current: {name} was {state.stale[name]}"
    return why if state.status != "unrecorded" else f"{why}: a stage before it was made again since"


def _finished_mixture(run_dir: Path, own: dict[str, Any] | None) -> tuple[Path, dict[str, Any]]:
    """The mixture folder of the finished run at ``run_dir`` and its marker, or why there is none."""
    from curation.stats.run_state import run_state
    from pipelines.safety import LockError, lock_holder

    if own:
        raise InputError(f"{run_dir} is the {own.get('stage')} stage's output; export reads a run folder or the mixture stage's")
    if not (run_dir / "run.json").is_file():
        if holder := lock_holder(run_dir):
            raise LockError(f"{run_dir} is still being written ({holder}); export it once the run has finished")
        built = [d for d in sorted(run_dir.glob("*_mixture")) if d.is_dir() and read_marker(d)]
        if built and not (run_dir / "run.progress.json").exists():  # stages run one by one: no run.json to wait for
            raise InputError(f"{run_dir} is not a finished run (no run.json: its stages were run one by one, or run.json was "
                             f"removed); its mixture stage finished: export that folder ({built[0]}), or re-run the recipe "
                             "with `curate run` into this folder")
        if meant := _folder_around(run_dir):
            raise InputError(
                f"{run_dir} is a folder inside {meant[0]}, not a run: export reads a run folder (`curate run`'s "
                f"--output) or a mixture folder (RUN/80_mixture); give {meant[1]}"
            )
        raise InputError(f"{run_dir} is not a finished run (no run.json: it is unfinished, failed or not a run folder); "
                         "finish it by running the same `curate run` command again, then export")
    state = run_state(run_dir)
    if state.status == "unrecorded":
        raise InputError(f"{run_dir / 'run.json'} cannot be read as a run record (cut or edited after curate wrote it); "
                         "re-run the same `curate run` command to rewrite it, then export")
    stage_dir = next(iter(sorted(p for p in run_dir.glob("*_mixture") if p.is_dir())), None)
    marker = read_marker(stage_dir) if stage_dir else None
    if stage_dir is None or not marker:
        raise InputError(f"{run_dir} has no finished mixture stage (NN_mixture/ with its _SUCCESS); enable the mixture and re-run")
    if stage_dir not in state.current:
        why = state.stale.get(stage_dir.name) or "a stage before it is not the run's current output"
        if why.startswith("made "):  # the stages before it are current: the mixture itself was re-run (`curate mixture`)
            raise InputError(f"{stage_dir} is not the run's current output ({why}: the mixture stage was re-run on its own); "
                             f"export that folder as it is (`curate export FORMAT {stage_dir}`), or make it the run's output by "
                             "re-running `curate run` with the settings it was made with as overrides (`mixture.KEY=VALUE`), "
                             "then export the run")
        raise InputError(
            f"{stage_dir} is not the run's current output ({upstream_cause(state, stage_dir, why)}; `curate "
            f"verify {run_dir}` says which); its own files are as recorded: export them as its manifests describe "
            f"them (`curate export FORMAT {stage_dir}`, which warns that they are not the current output), or "
            "re-run the same `curate run` command (it makes the stages that are not current and the mixture again), then export"
        )
    return stage_dir, marker


def _folder_around(folder: Path) -> tuple[Path, Path] | None:
    """(the stage or run folder that holds ``folder``, the folder an export of it probably meant), or None."""
    for parent in Path(folder).absolute().parents:
        marker = read_marker(parent)
        if marker and marker.get("stage") == "mixture":
            return parent, parent
        if marker:  # another stage's folder: the run around it
            return parent, parent.parent
        if (parent / "run.json").is_file():
            return parent, parent
    return None


def shard_jobs(manifest: dict[str, Any]) -> list[ShardJob]:
    """One job per shard of the phase's groups, with the group's packing file of the same number."""
    jobs = []
    for g in manifest["groups"]:
        packing = {Path(f["path"]).name: f for f in (g.get("packing") or {}).get("files", [])}
        for s in g["shards"]:
            name = Path(s["path"]).name
            number = int(name.removeprefix("part-").removesuffix(".parquet"))
            pk = packing.get(name)
            jobs.append(ShardJob(manifest["phase"], g["name"], number, s["path"], s["sha256"], int(s["bytes"]),
                                 pk["path"] if pk else None, pk["sha256"] if pk else None))
    return jobs


def read_verified(stage_dir: Path, rel: str, sha256: str, columns: list[str] | None = None) -> pa.Table:
    """A shard or packing file of the mixture, read once and checked against its manifest's sha256."""
    path = Path(stage_dir) / rel
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror}); the run is damaged: re-run it, then export") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise InputError(f"{path} does not match its manifest's sha256 (changed after the run wrote it, at the same size, which "
                         f"a resumed run does not see); delete {Path(stage_dir)} and re-run the same `curate run` command, then export")
    return pq.read_table(pa.BufferReader(data), columns=columns)


@contextlib.contextmanager
def export_folder(output: Path, run: RunExport, kind: str) -> Iterator[Path]:
    """Yield the in-progress folder of ``output``; on success write its marker and rename it into place."""
    output = Path(output)
    check_overlap(output, [run.run_dir])
    check_replaceable(output, ("export_megatron", "export_datasets"))
    # the run's lock keeps a `curate run` from rewriting it while it is read; a run folder this process
    # cannot write (a read-only mount, an archive) is not locked: nothing of ours can rewrite it either
    with folder_lock(run.run_dir) if os.access(run.run_dir, os.W_OK) else contextlib.nullcontext():
        work = output.parent / f".{output.name}.inprogress"
        shutil.rmtree(work, ignore_errors=True)
        try:
            work.mkdir(parents=True)
            yield work
            write_json(work / MARKER, {"writer": WRITER, "stage": f"export_{kind}", "run": str(run.run_dir.resolve()),
                                       "mixture": read_marker(run.stage_dir).get("output_fingerprint"),
                                       "phases": sorted(read_json_file(work / "export.json")["phases"]),  # kept ones too
                                       "files": file_records(work)})
            swap_into_place(work, output)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise


def empty_reason(manifest: dict[str, Any]) -> str:
    """Why a phase replays no token, from its manifest: the phase had no data (a shortfall), or its
    documents are too long for its share (a plan of a fraction of an epoch shows no whole copy), or
    its budget is 0; with shortfalls, what they say. The exports said "its manifest's shortfalls say why"."""
    budget = manifest.get("budget") or {}
    if shortfalls := manifest.get("shortfalls"):  # said, not pointed at
        said = {"no_data": "no document of its mix reached the mixture", "epoch_cap": "its groups are held at their epoch caps",
                "budget": "its budget is short"}
        reasons = dict.fromkeys(said.get(s.get("reason"), str(s.get("reason"))) for s in shortfalls)
        return "; ".join(reasons) + " (the manifest's shortfalls)"
    if budget.get("planned_tokens"):
        return (f"it plans {budget['planned_tokens']:,} tokens, less than one whole copy of its documents gives (the "
                "manifest's replay warning names the groups); a larger mixture.scale or budget shows some")
    return "its budget is 0 (mixture.scale × its tokens, or its budget override)"


def check_something_to_train(run: RunExport) -> None:
    """Refuse (exit 4) an export whose every phase replays no token by its manifest (no data, a fraction of one
    copy, a budget of 0), before the tokenizer is loaded: a trainer given it would train on nothing."""
    empty = {phase: m for phase, m in run.manifests.items() if not (m.get("budget") or {}).get("replay_tokens")}
    if empty and len(empty) == len(run.manifests):
        raise InputError(
            f"{run.run_dir}: no phase exported has anything to train on, so nothing was written ("
            + "; ".join(f"{phase}: the phase replays no token ({empty_reason(m)})" for phase, m in empty.items())
            + "); export a phase with data (--phase), or give the mixture data for these phases"
        )
