"""Which stage folders of a run folder belong to its current recipe, and whether the run finished.

A run folder describes one recipe. ``curate run`` records the stages it plans, with each one's
config hash, in ``run.progress.json`` while it runs (status ``running``, then ``failed`` or
``interrupted`` if it stops) and in ``run.json`` once it has finished (the progress file is then
removed). A stage folder is *current* when it is one of those stages, its ``_SUCCESS`` holds the
recorded config hash, and its input fingerprint is the output fingerprint of the current stage
before it (for the first stage, the raw-input fingerprint the run recorded). Every other stage
folder is *stale*: left from another recipe or from before an earlier stage was re-run. ``curate
verify``, ``curate stats``, ``curate report`` and ``curate manifest validate`` read only current
stages and say why the others were left out.

>>> # state = run_state(Path("runs/sample")); state.status, [p.name for p in state.current], state.stale
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

RUN_RECORD = "run.json"
PROGRESS = "run.progress.json"
MARKER = "_SUCCESS"


@dataclasses.dataclass(frozen=True)
class RunState:
    """What a run folder holds: its status, its current stage folders in run order, the stale ones."""

    path: Path
    status: str  #: complete | running | failed | interrupted | unrecorded (no run.json nor progress file)
    error: str | None  #: the failure's one line (failed / interrupted)
    current: list[Path]  #: stage folders of the run's recipe whose upstream is the run's current one
    stale: dict[str, str]  #: folder name → why it is not current
    pending: list[str]  #: folders of the run's recipe that are not (yet) current
    record: dict[str, Any]  #: run.json, or the progress file, as read ({} if neither)

    @property
    def incomplete(self) -> dict[str, str]:
        """Folder → why, for each current stage whose ``_SUCCESS`` says it finished incomplete (requests
        an LLM judge did not answer): in place and usable, but not all it asked for."""
        markers = {folder.name: read_json(folder / MARKER) for folder in self.current}
        return {name: str(m["incomplete"]) for name, m in markers.items() if isinstance(m, dict) and m.get("incomplete")}

    @property
    def finished(self) -> bool:
        return self.status == "complete" and not self.pending

    def describe(self, holder: str | None = None) -> str:
        """One line on how the run stands ("" when it finished and every stage folder is current).
        ``holder``: who holds the run folder's lock, for a run recorded as running (None: nobody,
        so it stopped without saying why)."""
        parts = []
        if self.status == "unrecorded" and (self.path / RUN_RECORD).exists():
            parts.append(f"{self.path / RUN_RECORD} cannot be read as a run record (cut or edited after curate wrote it); "
                         "re-run the same `curate run` command to rewrite it")
        elif self.status == "unrecorded" and self.current:
            parts.append(f"{self.path} has no {RUN_RECORD}: a folder of stages run one at a time (`curate <stage>`), not a "
                         "finished `curate run` (or its run.json was removed); `curate verify` checks each stage against the "
                         "one it was made from")
        elif self.status == "unrecorded":
            parts.append(f"{self.path} has no {RUN_RECORD}: the run did not finish (or an older curate wrote it)")
        elif self.status != "complete":
            why = f" ({self.error})" if self.error else ""
            state = f"it is {self.status}"
            if self.status == "running":
                state = f"it is still running ({holder})" if holder else "it stopped without finishing (killed, or its machine went down)"
            parts.append(f"the run did not finish: {state}{why}; stages not done: {', '.join(self.pending) or 'none'}")
        elif self.pending:
            parts.append(f"stages of the run's recipe are missing or changed: {', '.join(self.pending)}")
        if incomplete := self.incomplete:
            parts.append("finished incomplete: " + "; ".join(f"{k} ({v})" for k, v in incomplete.items())
                         + "; re-run the same command when the judge answers (it sends only the requests that got no answer)")
        if self.stale:
            parts.append("left out (not this run's current output): " + "; ".join(f"{k}: {v}" for k, v in sorted(self.stale.items())))
        return "; ".join(parts)


def is_stage_folder(path: Path) -> bool:
    return path.is_dir() and path.name[:2].isdigit() and "_" in path.name


def read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _record(run_dir: Path) -> tuple[str, dict[str, Any]]:
    done = read_json(run_dir / RUN_RECORD)
    if isinstance(done, dict) and isinstance(done.get("stages"), list):
        return "complete", done
    progress = read_json(run_dir / PROGRESS)
    if isinstance(progress, dict) and isinstance(progress.get("stages"), list):
        return str(progress.get("status") or "running"), progress
    return "unrecorded", {}


def run_state(run_dir: str | Path) -> RunState:
    """The state of ``run_dir`` (see the module docstring)."""
    run_dir = Path(run_dir)
    status, record = _record(run_dir)
    on_disk = {p.name: p for p in sorted(run_dir.iterdir()) if is_stage_folder(p)} if run_dir.is_dir() else {}
    current: list[Path] = []
    stale: dict[str, str] = {}
    pending: list[str] = []
    if record:
        previous: str | None = None
        broken = False
        planned = [s for s in record["stages"] if isinstance(s, dict) and s.get("folder")]
        for i, entry in enumerate(planned):
            folder = on_disk.pop(str(entry["folder"]), None)
            why = None if not broken else "an earlier stage of the run is not current"
            marker = read_json(folder / MARKER) if folder is not None else None
            if why is None:
                why = _why_not_current(entry, marker, previous, first=i == 0)
            if why is None and marker is not None:
                current.append(folder)  # type: ignore[arg-type]
                previous = marker.get("output_fingerprint")
                continue
            broken = True
            pending.append(str(entry["folder"]))
            if folder is not None and marker is not None:
                stale[folder.name] = why or "not current"
        for name in on_disk:
            if (on_disk[name] / MARKER).exists():
                stale[name] = "not a stage of the run's recipe (left from a run with another recipe)"
    else:  # no record: the chain of markers on disk, in folder order
        previous = None
        for name, folder in on_disk.items():
            marker = read_json(folder / MARKER)
            if not isinstance(marker, dict):
                continue
            if current and marker.get("input_fingerprint") != previous:
                stale[name] = "its input is not the output of the stage before it (left from an older run)"
                continue
            current.append(folder)
            previous = marker.get("output_fingerprint")
    error = record.get("error") if isinstance(record.get("error"), str) else None
    return RunState(run_dir, status, error, current, stale, pending, record)


def _why_not_current(entry: dict[str, Any], marker: Any, previous: str | None, first: bool) -> str | None:
    if not isinstance(marker, dict):
        return "not finished"
    if entry.get("config_hash") and marker.get("config_hash") != entry["config_hash"] and not _same_output(marker, entry["config_hash"]):
        return f"made with another config (hash {str(marker.get('config_hash'))[:12]}, the run's is {str(entry['config_hash'])[:12]})"
    if first:
        recorded = entry.get("input_fingerprint")
        if recorded and marker.get("input_fingerprint") != recorded:
            return "made from other input files than the run's"
        return None
    if marker.get("input_fingerprint") != previous:
        return "made from another output of the stage before it"
    return None


def _same_output(marker: dict[str, Any], chash: str) -> bool:
    """Whether the stage's output is, byte for byte, the one config ``chash`` made from the same input:
    made again with another config, it came out as before (restat, ``same_output_as`` in its marker)."""
    return any(isinstance(m, dict) and m.get("config_hash") == chash and m.get("input_fingerprint") == marker.get("input_fingerprint")
               for m in marker.get("same_output_as") or [])


def no_mixture_message(run_dir: str | Path, state: RunState | None) -> str:
    """Why ``curate stats RUN --mixture`` finds no manifests of the run: a mixture folder the run
    leaves out because another config made it (``curate mixture`` run into it with other settings) is
    said first, with the command that reads that folder on its own."""
    run_dir = Path(run_dir)
    for name, why in (state.stale if state is not None else {}).items():
        if name.endswith("_mixture") and why.startswith("made with another config") and (run_dir / name / "manifests").is_dir():
            return (f"{run_dir}: {name} was made with another config than the run's recipe ({why.split('(', 1)[-1].rstrip(')')}), "
                    f"so it is not this run's mixture: `curate stats {run_dir / name} --mixture` reads its manifests; "
                    "`curate run` with the run's recipe makes the run's own again")
    return f"{run_dir}: no mixture manifests of this run (the mixture stage did not run or did not finish)"
