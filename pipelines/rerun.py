"""Whether a stage folder is up to date, why it is made again, and, before a run changes anything in
its folder, whether every stage folder it will replace may be replaced; what a stopped write left
beside a stage folder, and what the CLI says of a stop that came once the new output was in place.

A stage is skipped when its ``_SUCCESS`` records the config hash and input fingerprint it would be
made with, its files are as recorded and its last run was complete (:func:`rerun_reason`). A run
checks the folders of the stages it will make again before it removes ``run.json``
(:func:`check_run_replaceable`): a refused run (exit 5) leaves a finished run as it was.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipelines.marker import INPUT_CHECKSUMS, check_files, output_fingerprint, raw_fingerprint, read_marker
from pipelines.safety import OutputError, check_replaceable


def rerun_reason(stage_dir: Path, chash: str, fingerprint: str, config: dict[str, Any] | None = None,
                 raw: bool = False, recipe_keys: dict[str, Any] | None = None) -> tuple[str | None, bool]:
    """Why the stage folder is made again, and whether that is a fault (damaged or incomplete
    output, logged as a warning) rather than a change the user made: ``(None, False)`` when it is up to
    date, ``("", False)`` when it holds no output yet. ``config``: the stage's flat config, to name
    the keys that changed (from ``stats.json``), with ``recipe_keys``: the recipe keys outside its section it
    reads (``seed``); ``raw``: its input is raw files (ingest)."""
    marker = read_marker(stage_dir)
    if not marker:
        return "", False
    if marker.get("config_hash") != chash:
        return f"its config changed ({_changed_keys(stage_dir, config, recipe_keys)})", False
    if marker.get("input_fingerprint") != fingerprint:
        what = "an input file was edited, added or removed" if raw else "the folder it reads was made again, or is another"
        return f"its input changed since it was made ({what})", False
    damage = check_files(stage_dir, marker)
    if damage:
        more = f" (and {len(damage) - 1} more)" if len(damage) > 1 else ""
        return f"its output is not as its marker recorded: {damage[0]}{more}", True
    if marker.get("incomplete"):
        return f"its last run was incomplete ({marker['incomplete']})", True
    return None, False


def _changed_keys(stage_dir: Path, config: dict[str, Any] | None, recipe_keys: dict[str, Any] | None = None) -> str:
    """The keys whose values differ between the folder's ``stats.json`` and ``config`` (and the recipe keys
    outside its section it records), as ``key old → new``."""
    try:
        stats = json.loads((Path(stage_dir) / "stats.json").read_text())
        old, new = stats["config"], json.loads(json.dumps(config, default=str))
        if isinstance(stats.get("recipe_keys"), dict) and isinstance(old, dict) and isinstance(new, dict):
            old = {**old, **stats["recipe_keys"]}
            new = {**new, **json.loads(json.dumps(recipe_keys or {}, default=str))}
    except (OSError, ValueError, KeyError, TypeError):
        old = new = None
    if not isinstance(old, dict) or not isinstance(new, dict):
        return "its config hash differs"
    keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    if not keys:
        return "a model file it names, its version or a recipe key outside its section"
    shown = ", ".join(f"{k} {json.dumps(old.get(k))} → {json.dumps(new.get(k))}" for k in keys[:3])
    return shown + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")


def check_run_replaceable(recipe: dict[str, Any], names: list[str], inputs: list[Any], output: Path,
                          cache_root: Path | None = None) -> None:
    """Raise the :class:`OutputError` (exit 5) of the first stage folder in ``output`` that the run
    will make again and that may not be replaced (:func:`check_replaceable`), before the run changes
    anything. A folder that would be refused but stays up to date (skipped) is no reason to stop: the
    run follows the stages as the runner will, each input fingerprint from the stage before it (its
    marker when it is skipped, else the fingerprint the runner records for a remade stage whose output
    changes: whether it comes out as before, :mod:`pipelines.restat`, is known only once it has run)."""
    from pipelines.recipe import stage_config, stage_hash
    from pipelines.stage_cache import cache_dir
    from pipelines.stages import folder_name, load_stage

    refused: dict[str, OutputError] = {}
    for name in names:
        try:
            check_replaceable(Path(output) / folder_name(name), (name,))
        except OutputError as exc:
            refused[name] = exc
    if not refused:  # the common case: nothing to work out, no input file read
        return
    fingerprint: str | None = None
    for name in names:
        stage, stage_dir = load_stage(name), Path(output) / folder_name(name)
        cfg = stage_config(recipe, name, stage.config_cls)
        chash = stage_hash(name, recipe, stage, cfg)
        if getattr(stage, "reads_raw", False):
            cache = Path(cache_root) / name if cache_root is not None else cache_dir(name, stage_dir, Path(output))
            fingerprint = raw_fingerprint(sorted(set(stage.input_files(inputs or [], cfg))), cache / INPUT_CHECKSUMS)
        elif fingerprint is None:  # no raw stage before it: the runner says what is wrong
            return
        why, _ = rerun_reason(stage_dir, chash, fingerprint)
        if why is not None and name in refused:
            raise refused[name]
        marker = read_marker(stage_dir) or {}
        fingerprint = marker.get("output_fingerprint") if why is None else output_fingerprint(chash, fingerprint)


def stale_in_run(stage_dir: Path, run_dir: Path | None) -> set[str]:
    """The stale stage folders, whatever made them so, of the finished run whose folder holds
    ``stage_dir`` (``run_dir`` None: a single stage, not part of a ``curate run``); none when the
    folder is not a finished run's."""
    from curation.stats.run_state import run_state

    parent = Path(stage_dir).parent
    if run_dir is not None or not (parent / "run.json").exists():
        return set()
    return set(run_state(parent).stale)


def stale_after(stage_dir: Path, run_dir: Path | None) -> Callable[[], list[str]]:
    """Called before a single stage's new output is put in place in a finished run's folder, the
    warnings to give once it is (``run_dir`` None: not part of a ``curate run``): the run's later
    stages this re-run made stale (stale now, not before it), as one warning; none when the folder is
    not a run's stage or nothing after it went stale because of it."""
    before = stale_in_run(stage_dir, run_dir)

    def warnings() -> list[str]:
        made = stale_in_run(stage_dir, run_dir) - before
        return _stale_warning(stage_dir, sorted(name for name in made if name > Path(stage_dir).name))

    return warnings


def _stale_warning(stage_dir: Path, stale: list[str]) -> list[str]:
    if not stale:
        return []
    parent = Path(stage_dir).parent
    marker = read_marker(Path(stage_dir)) or {}
    same = marker.get("output_fingerprint") != output_fingerprint(
        str(marker.get("config_hash")), str(marker.get("input_fingerprint"))
    )
    made = (
        "from an output the same as its new one, but the run records other settings for it, so they count as stale "
        "(curate verify and curate stats leave them out)"
        if same and marker.get("same_output_as")
        else "from its previous output and are stale now (curate verify and curate stats leave them out)"
    )
    return [
        f"{Path(stage_dir).name} was made again inside the run {parent}: its later stages ({', '.join(stale)}) were made "
        f"{made}; to bring them up to "
        f"date, re-run the recipe into {parent} with the settings you gave this stage (as overrides or in your recipe "
        f"file): with the recipe's own, the run makes {Path(stage_dir).name} again as it was"
    ]


def kept_after_stop(stage_dir: Path, run_dir: Path | None, old: Path) -> str:
    """What the CLI says of a stop (Ctrl-C, SIGTERM) that came once the stage's new output was in place
    (:func:`pipelines.safety.swapped_into_place`): it finished; ``old``, its previous output, may be left."""
    stage_dir = Path(stage_dir)
    left = f"its previous output is left, whole or in part, in {old}" if old.exists() else ""
    if run_dir is not None:
        return (f"finished stages are kept, {stage_dir.name} among them (its new output is in place{'; ' + left if left else ''}); "
                f"re-run the same command to resume{' (it deletes that folder)' if left else ''}")
    return (f"the stage finished: its new output is in place in {stage_dir}" + (f"; {left}: re-run the same command, which "
            f"skips the stage (up to date) and deletes that folder, or delete it" if left else "; nothing is left to delete"))


def remove_leftovers(target: Path) -> None:
    """Delete what a stopped write of ``target`` left beside it: ``.NAME.inprogress`` (a killed stage's
    output) and ``.NAME.old`` (the previous output a stopped swap was deleting), folders only this
    tool names so; the caller holds the lock of ``target``."""
    for leftover in (target.parent / f".{target.name}.inprogress", target.parent / f".{target.name}.old"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
