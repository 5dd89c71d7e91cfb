"""What an export does with an earlier export in its ``--output`` folder: never delete a phase without a word.

- **The same export, other phases.** An earlier export of the same format, run, mixture and settings
  (tokenizer, ``--eod-token``, ``--pad-token``, ``--truncation``), written at this path: the phases this export writes
  replace theirs and its other phases are kept — their files hard-linked into the new folder, their
  entries merged into ``export.json`` — so ``--phase`` exports a run one phase at a time.
- **Every phase rewritten.** An earlier export of the same format whose phases this export all writes
  again (a re-export, or the run re-run since) is replaced, as every ``curate`` output is.
- **Anything else** — another format, or phases of another run, mixture or setting that this export would
  not write again — is refused (exit 5, nothing changed) unless ``--replace`` is given, which replaces
  the earlier export whole and says which phases it removes.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from curation.errors import read_json_file
from pipelines.exports.common import RunExport
from pipelines.io import write_json
from pipelines.marker import check_files, read_marker
from pipelines.safety import OutputError, check_overlap, check_replaceable

log = logging.getLogger("curate.export")
_OPTION = {"eod_token": "--eod-token", "truncation": "--truncation", "pad_token": "--pad-token"}


@dataclasses.dataclass(frozen=True)
class Earlier:
    """The earlier export in ``output``: the phases this export keeps, and their figures and files."""

    output: Path
    phases: dict[str, Any]
    keep: list[str]
    files: list[str]


def plan_earlier(
    output: Path, run: RunExport, kind: str, settings: dict[str, Any], replace: bool = False
) -> Earlier | None:
    """What becomes of the export already in ``output`` (None: there is none, or nothing of it is kept);
    :class:`OutputError` where this export would remove phases of it and ``replace`` is not given."""
    output = Path(output)
    check_overlap(output, [run.run_dir])
    check_megatron_cache(output)
    check_replaceable(output, ("export_megatron", "export_datasets"))
    marker = read_marker(output)
    if not marker:
        return None  # absent, or an empty folder
    wrote = str(marker.get("stage", "")).removeprefix("export_")
    try:
        export = read_json_file(output / "export.json")
        phases = dict(export["phases"])
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
    ):  # its phases as its marker lists them: not kept, not removed unasked
        export, phases = {}, dict.fromkeys(marker.get("phases") or [])
    others = [p for p in phases if p not in run.manifests]
    differs = _differs(output, marker, export, run, kind, settings)
    if wrote == kind and not differs:
        if others and not replace and (damage := check_files(output, marker)):
            raise OutputError(
                f"{output}: the earlier export's files changed since it was written ({damage[0]}), so its phases "
                f"{', '.join(others)} cannot be kept: choose another --output, or give --replace to replace it whole"
            )
        if others and not replace:
            files = [
                rel
                for rel in marker.get("files", {})
                if rel.split("/")[0] in others or rel in {f"{p}.data-args" for p in others}
            ]
            return Earlier(output, phases, others, files)
        if not others:
            return None  # every phase written again: a re-export replaces itself
    elif not others and wrote == kind:
        return None  # same format, every phase written again from another run or setting: replaced, as any output is
    what = f"a {wrote} export of {', '.join(phases) or 'no phase'}"
    if replace:
        log.warning(
            "%s: --replace: the earlier export (%s) is replaced%s",
            output,
            what,
            f"; its phases {', '.join(others)} are removed" if others else "",
        )
        return None
    why = (
        f"this {kind} export would replace it"
        if wrote != kind
        else (
            f"this export writes {', '.join(run.manifests)} only and the earlier one is {differs}, so its phases "
            f"{', '.join(others)} would be removed"
        )
    )
    raise OutputError(
        f"{output} holds {what}; {why}. Nothing was changed: choose another --output, "
        "or give --replace to replace the earlier export whole"
    )


def check_megatron_cache(output: Path) -> None:
    """Refuse (:class:`OutputError`) an earlier export that holds a ``cache/`` folder it does not list: the sample
    indices Megatron writes beside the prefixes when a training run is given no ``--data-cache-path``. Neither a
    re-export nor ``--replace`` removes it: they replace only files curate wrote."""
    marker = read_marker(output)
    cache = Path(output) / "cache"
    if not marker or not str(marker.get("stage", "")).startswith("export_") or not cache.is_dir():
        return
    if any(rel.split("/")[0] == "cache" for rel in marker.get("files", {})):
        return
    raise OutputError(
        f"{output} holds {cache}/, which curate did not write: Megatron's sample indices, written beside the "
        "prefixes by a training run given no --data-cache-path. Nothing was changed: a re-export, with or without "
        "--replace, replaces only the files curate wrote; move that folder away (Megatron builds it again) or "
        "choose another --output, and give the next training run --data-cache-path outside the export (e.g. "
        f"--data-cache-path {Path(output).parent / 'megatron-cache'})"
    )


def _differs(
    output: Path, marker: dict[str, Any], export: dict[str, Any], run: RunExport, kind: str, settings: dict[str, Any]
) -> str | None:
    """How the earlier export differs from this one in what its files hold (None: alike, phases aside)."""
    if not export:
        return "unreadable (its export.json)"
    if export.get("run") != str(run.run_dir.resolve()):
        return f"of another run ({export.get('run')})"
    if marker.get("mixture") != (read_marker(run.stage_dir) or {}).get("output_fingerprint"):
        return "of an earlier mixture of this run (re-run since)"
    for key, value in {"tokenizer": run.tokenizer, **settings}.items():
        if export.get(key, "none" if key == "truncation" else None) != value:
            return f"written with {_OPTION.get(key, key)} {export.get(key)!r}"
    root = output.resolve()
    for phase, p in export.get("phases", {}).items():  # a blend names its files by absolute path
        flags = p.get("megatron_flags") or []
        if kind == "megatron" and flags and str(root / f"{phase}.data-args") not in flags:
            return "written at another path (its .data-args name files elsewhere)"
    return None


def keep_phases(earlier: Earlier | None, work: Path, out: dict[str, Any]) -> list[str]:
    """Hard-link the kept phases' files from the earlier export into ``work`` (copied where a link
    cannot be made) and merge their entries into ``out`` and ``work/export.json``, in the order a
    whole export lists them (the manifests' file names); the phases kept."""
    if earlier is None:
        return []
    for rel in earlier.files:
        src, dst = earlier.output / rel, Path(work) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    merged = {**{p: earlier.phases[p] for p in earlier.keep}, **out["phases"]}
    out["phases"] = dict(sorted(merged.items(), key=lambda kv: f"{kv[0]}.json"))
    write_json(Path(work) / "export.json", out)
    return list(earlier.keep)
