"""Re-check a finished run: every stage its ``run.json`` lists, files against their markers
(checksums included), per-stage conservation by id, stats (documents and tokens) against files,
manifests and shards.

Every problem is listed (a read error names its file); the list is empty when the run is sound.

>>> # problems = verify_run(Path("runs/sample")); problems == [] means the run is sound
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.marker import MARKER, check_files, is_part, read_marker, unrecorded


def _ids(folder: Path, problems: list[str]) -> tuple[list[str], int] | None:
    """The doc_ids of a folder's parts and the sum of their ``n_tokens`` (a part without that
    column adds none), or None (with a problem per unreadable file)."""
    out: list[str] = []
    tokens = 0
    ok = True
    for f in sorted(folder.glob("part-*.parquet")):
        try:
            part = pq.ParquetFile(f)
            columns = ["doc_id", "n_tokens"] if "n_tokens" in part.schema_arrow.names else ["doc_id"]
            table = part.read(columns=columns)
            out.extend(table.column("doc_id").to_pylist())
            if "n_tokens" in columns:
                tokens += int(pc.sum(table.column("n_tokens")).as_py() or 0)
        except Exception as exc:  # noqa: BLE001 - any reader error is a damaged file
            text = str(exc).strip().splitlines()
            problems.append(f"{f}: cannot read ({text[0] if text else type(exc).__name__})")
            ok = False
    return (out, tokens) if ok else None


def stage_folders(run_dir: Path) -> list[Path]:
    return [p for p in sorted(Path(run_dir).iterdir()) if p.is_dir() and p.name[:2].isdigit() and "_" in p.name]


def verify_stage(stage_dir: Path, input_ids: list[str] | None,
                 previous: dict[str, Any] | None = None) -> tuple[list[str], list[str] | None]:
    """Problems with one stage folder (empty list = sound) and the doc_ids it keeps (None where it
    did not get to read them); ``previous`` is the prior stage's marker."""
    name = stage_dir.name
    marker = read_marker(stage_dir)
    if marker is None:
        return [f"{name}: no readable {MARKER} (the stage did not finish)"], None
    problems = [f"{name}: {p}" for p in check_files(stage_dir, marker, checksums=True)]
    problems += [f"{name}: {stage_dir / rel} is not listed in its {MARKER} (the stage did not write it)"
                 for rel in unrecorded(stage_dir, marker) if not is_part(rel)]
    if marker.get("incomplete"):  # in place and sound, but without every answer it asked for
        problems.append(f"{name}: finished incomplete ({marker['incomplete']}); re-run the same command when the judge answers")
    if previous is not None and marker.get("input_fingerprint") != previous.get("output_fingerprint"):
        problems.append(f"{name}: its input fingerprint is not the previous stage's output: it was made from other data")
    try:
        stats = json.loads((stage_dir / "stats.json").read_text())
    except (OSError, ValueError) as exc:
        return [*problems, f"{name}: {stage_dir / 'stats.json'} is missing or unreadable ({exc})"], None
    read_kept, read_dropped = _ids(stage_dir / "docs", problems), _ids(stage_dir / "ledger", problems)
    if read_kept is None or read_dropped is None:
        return problems, None
    (kept, kept_tokens), (dropped, dropped_tokens) = read_kept, read_dropped
    if len(set(kept)) != len(kept):
        problems.append(f"{name}: {len(kept) - len(set(kept))} documents kept twice")
    if len(set(dropped)) != len(dropped):
        problems.append(f"{name}: {len(dropped) - len(set(dropped))} documents in the ledger twice")
    both = set(kept) & set(dropped)
    if both:
        problems.append(f"{name}: {len(both)} documents both kept and in the ledger (e.g. {sorted(both)[:3]})")
    if stats["kept"]["documents"] != len(kept):
        problems.append(f"{name}: stats.json says {stats['kept']['documents']} kept, docs/ holds {len(kept)}")
    if stats["dropped"]["documents"] != len(dropped):
        problems.append(f"{name}: stats.json says {stats['dropped']['documents']} dropped, ledger/ holds {len(dropped)}")
    problems += _token_problems(name, stats, kept_tokens, dropped_tokens)
    if input_ids is not None:
        missing = set(input_ids) - set(kept) - set(dropped)
        extra = (set(kept) | set(dropped)) - set(input_ids)
        if missing:
            problems.append(f"{name}: {len(missing)} input documents are neither kept nor in the ledger (e.g. {sorted(missing)[:3]})")
        if extra:
            problems.append(f"{name}: {len(extra)} documents appear that were not in its input (e.g. {sorted(extra)[:3]})")
    elif stats["in"]["documents"] != len(kept) + len(dropped):
        problems.append(f"{name}: {stats['in']['documents']} records read but {len(kept) + len(dropped)} kept + dropped")
    return problems, kept


def _token_problems(name: str, stats: dict[str, Any], kept: int, dropped: int) -> list[str]:
    """stats.json's tokens against the files' ``n_tokens``, and in + re-counted = kept + dropped."""
    problems = []
    if stats["kept"].get("tokens", kept) != kept:
        problems.append(f"{name}: stats.json says {stats['kept']['tokens']:,} tokens kept, docs/ holds {kept:,}")
    if stats["dropped"].get("tokens", dropped) != dropped:
        problems.append(f"{name}: stats.json says {stats['dropped']['tokens']:,} tokens dropped, ledger/ holds {dropped:,}")
    came, recounted = stats["in"].get("tokens"), (stats.get("recounted") or {}).get("tokens", 0)
    if came is not None and came + recounted != kept + dropped:
        problems.append(f"{name}: stats.json says {came:,} tokens in and {recounted:+,} re-counted, "
                        f"but docs/ and ledger/ hold {kept + dropped:,}")
    return problems


def _unfinished(run_dir: Path, status: str, error: str | None) -> str:
    """A run that did not finish, in words: still running (someone holds its lock), stopped, failed."""
    from pipelines.safety import lock_holder

    holder = lock_holder(run_dir) if status == "running" else ""
    if holder:
        return f"the run did not finish: it is still running ({holder}); verify it once it has finished"
    state = "it stopped without finishing (killed, or its machine went down)" if status == "running" else f"it is {status}"
    why = f": {error}" if error else ""
    return f"the run did not finish ({state}{why}); re-run the same command to finish it"


def verify_run(run_dir: Path, manifest_check: Callable[[Path], list[str]] | None = None) -> list[str]:
    """Problems with a whole run: every stage of its recipe, in order, then every manifest of a
    current stage; a run that did not finish and a stage folder left from another recipe (or
    made from another upstream) are problems too (:mod:`curation.stats.run_state`)."""
    from curation.stats.run_state import run_state

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return [f"{run_dir}: not a folder"]
    loose = _loose_stages(run_dir)
    if loose:
        return _verify_loose(run_dir, loose, manifest_check)
    problems: list[str] = []
    state = run_state(run_dir)
    if state.status == "unrecorded" and (run_dir / "run.json").exists():
        problems.append(f"{run_dir / 'run.json'} cannot be read as a run record (cut or edited after curate wrote it); "
                        "re-run the same `curate run` command to rewrite it")
    elif state.status == "unrecorded":
        problems.append(f"{run_dir / 'run.json'} is missing: the run did not finish (re-run it) or this is not a run folder")
    elif state.status != "complete":
        problems.append(_unfinished(run_dir, state.status, state.error))
    problems += [f"{name}: left out: {why}; re-run the recipe into this folder (it removes or replaces it)"
                 for name, why in sorted(state.stale.items())]
    listed = [s["folder"] for s in state.record.get("stages", []) if isinstance(s, dict) and s.get("folder")]
    folders = [run_dir / f for f in listed] if state.status == "complete" else list(state.current)
    if not folders and not state.record.get("stages"):
        return [*problems, f"{run_dir}: no stage folders (NN_<stage>/)"]
    previous_ids: list[str] | None = None
    previous_marker: dict[str, Any] | None = None
    for folder in folders:
        if not folder.is_dir():
            problems.append(f"{folder.name}: listed in run.json but missing")
            previous_ids, previous_marker = None, None
            continue
        if folder.name in state.stale:
            previous_ids, previous_marker = None, None
            continue
        found, previous_ids = verify_stage(folder, previous_ids, previous_marker)
        problems += found
        if previous_ids is None:  # the stage stopped short of its documents: the next one is checked against them still
            read = _ids(folder / "docs", [])
            previous_ids = read[0] if read is not None else None
        previous_marker = read_marker(folder)
    return problems + _manifest_problems(run_dir, state.current, manifest_check)


def _manifest_problems(run_dir: Path, folders: list[Path], manifest_check: Callable[[Path], list[str]] | None) -> list[str]:
    problems: list[str] = []
    for folder in folders if manifest_check is not None else []:
        for manifest in sorted(folder.glob("manifests/*.json")):
            name = manifest.relative_to(run_dir) if manifest.is_relative_to(run_dir) and manifest != run_dir else manifest
            try:
                problems += [f"{name}: {p}" for p in manifest_check(manifest)]
            except Exception as exc:  # noqa: BLE001 - a damaged manifest is one more problem
                problems.append(f"{name}: cannot check ({str(exc)[:300]})")
    return problems


def _loose_stages(run_dir: Path) -> list[Path]:
    """Stage folders written by single-stage commands, not by ``curate run``: the folder itself when it
    is one, else its sub-folders with a marker (any names) when it has no run.json."""
    if (run_dir / MARKER).exists() and (run_dir / "docs").is_dir():
        return [run_dir]
    if (run_dir / "run.json").exists() or (run_dir / "run.progress.json").exists():
        return []
    return [p for p in sorted(run_dir.iterdir()) if p.is_dir() and (p / MARKER).exists()]


def _verify_loose(run_dir: Path, folders: list[Path], manifest_check: Callable[[Path], list[str]] | None) -> list[str]:
    """Each stage folder on its own, and against the folder it was made from (the one whose output
    fingerprint is its input's) when that folder is here too: what stages run one by one can show."""
    problems: list[str] = []
    markers = {f: read_marker(f) or {} for f in folders}
    maker = {m["output_fingerprint"]: f for f, m in markers.items() if m.get("output_fingerprint")}
    kept: dict[Path, list[str] | None] = {}

    def check(folder: Path, seen: frozenset[Path] = frozenset()) -> list[str] | None:
        if folder not in kept:
            upstream = maker.get(markers[folder].get("input_fingerprint"))
            ids = check(upstream, seen | {folder}) if upstream is not None and upstream not in seen | {folder} else None
            found, kept[folder] = verify_stage(folder, ids, markers[upstream] if ids is not None else None)
            problems.extend(found)
        return kept[folder]

    for folder in folders:  # in name order, each after the folder it was made from
        check(folder)
        was = markers[folder].get("input")  # the folder it read: there, but holding another output since
        now = read_marker(Path(was)) if was and Path(was).is_dir() else None
        if now is not None and now.get("output_fingerprint") != markers[folder].get("input_fingerprint"):
            problems.append(f"{folder.name}: made from {was}, which holds another output since (a stage re-run into it): "
                            "re-run this stage and the ones after it")
    return problems + _manifest_problems(run_dir, folders, manifest_check)
