"""Restat: a stage made again whose output comes out byte for byte as before hands on its previous
output fingerprint, so the stages after it stay up to date and their sub-step caches are reused.

A stage's ``_SUCCESS`` records a ``content_digest`` of what the stages after it can read from its
folder (:func:`content_digest`). When the stage runs again in a folder that held a finished output
and the new output's digest is the one that output's marker recorded, the new marker keeps the old
``output_fingerprint`` and records under ``same_output_as`` the config hashes (with their input
fingerprints) of the earlier runs that made these very bytes; a manifest of a later stage that cites
one of them still describes its input (:mod:`curation.mixture.manifest_check`). A marker without a
digest (an older curate), an incomplete output or another digest: the fingerprint is derived from the
config hash and input fingerprint, as for any new output.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from pipelines.marker import MARKER, WRITER, checksum, file_records, is_part, output_fingerprint

log = logging.getLogger(__name__)

DIGEST = "content_digest"
SAME = "same_output_as"
#: what stats.json says of how the output was made, not of what it is: left out of the digest
MADE_WITH = ("stage", "version", "config", "config_hash", "recipe_keys")
#: a sub-step's own record (key and file times, pipelines/kit/step_record.py): not content
STEP_RECORD = "_DONE"


def read_artifacts(stage: str) -> set[str]:
    """The artifacts of ``stage`` that a later stage reads (its ``requires_artifacts``)."""
    from pipelines.stages import STAGES, load_stage

    return {
        artifact
        for n in STAGES
        for upstream, artifact in getattr(load_stage(n), "requires_artifacts", {}).values()
        if upstream == stage
    }


def digested(rel: str, artifacts: set[str]) -> bool:
    """Whether the file ``rel`` of a stage folder is part of its content digest: the parts under
    ``docs/`` and ``ledger/``, the artifacts later stages read, and every other file it wrote
    (shards, manifests), never the marker, ``stats.json`` (digested apart) or a sub-step's record."""
    if rel in (MARKER, "stats.json") or rel.rsplit("/", 1)[-1] == STEP_RECORD:
        return False
    head, _, rest = rel.partition("/")
    if head == "artifacts":
        return rest.partition("/")[0] in artifacts
    return head not in ("docs", "ledger") or is_part(rel)


#: what a judge's figures say of how its requests went (``annotation.stats``), not of the answers: a re-run
#: served from the answer cache, or retried after a timeout, makes the same output with other counts
RUN_RECORD_KEYS = frozenset({"requests", "cache_hits", "tokens_in", "tokens_out", "retries", "retry_reasons"})


def without_timings(value: Any) -> Any:
    """``value`` with every key that holds a timing (``seconds``, ``cpu_seconds``, ``docs_per_second``,
    ``documents_per_s`` …) or a count of requests (:data:`RUN_RECORD_KEYS`) left out, at any depth: a
    run of the same work takes another time."""
    if isinstance(value, dict):
        return {
            k: without_timings(v)
            for k, v in value.items()
            if not str(k).endswith(("seconds", "per_second", "_per_s")) and k not in RUN_RECORD_KEYS
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def _incomplete_before(chain: list[Path]) -> list[str]:
    """The stages before it, of ``chain`` (its input folders, in run order), whose outputs are incomplete:
    what a mixture's manifests say (``incomplete``), so an output made after one of them turned complete
    or incomplete is another output, however its files come out."""
    from pipelines.marker import read_marker

    return [str(m.get("stage")) for m in (read_marker(p) or {} for p in chain) if m.get("incomplete")]


def content_digest(folder: Path, stage: str, files: dict[str, dict[str, Any]], incomplete_before: list[str] | None = None) -> str:
    """SHA-256 over what the stages after ``stage`` can read from ``folder``: each digested file's
    path and xxh3 checksum (those :func:`~pipelines.marker.file_records` computed for ``files`` are
    reused; a larger file is read here in blocks); a JSON file and ``stats.json`` as their content
    without timings, ``stats.json`` without the keys that say how it was made (:data:`MADE_WITH`)."""
    folder, artifacts = Path(folder), read_artifacts(stage)
    h = hashlib.sha256()
    for rel in sorted(r for r in files if digested(r, artifacts)):
        if rel.endswith(".json"):
            try:
                body = _json_digest(without_timings(json.loads((folder / rel).read_text())))
            except ValueError:  # not JSON after all: its bytes
                body = checksum(folder / rel)
        else:
            body = files[rel].get("xxh3") or checksum(folder / rel)
        h.update(f"{rel}\0{body}\0".encode())
    try:
        stats = json.loads((folder / "stats.json").read_text())
    except (OSError, ValueError):
        stats = {}
    counts = {k: v for k, v in stats.items() if k not in MADE_WITH} if isinstance(stats, dict) else stats
    h.update(f"stats.json\0{_json_digest(without_timings(counts))}\0".encode())
    if incomplete_before:  # absent when none is: a digest of a chain of complete stages is what it was
        h.update(f"incomplete before\0{_json_digest(sorted(incomplete_before))}\0".encode())
    return h.hexdigest()


def _json_digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def stage_marker(
    work: Path,
    name: str,
    version: Any,
    chash: str,
    fingerprint: str,
    chain: list[Path],
    incomplete: str | None,
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``_SUCCESS`` of the output in ``work``, with its content digest and the output fingerprint
    it hands on: ``previous``'s (the marker of the output it replaces) when that marker recorded the
    same digest and neither output is incomplete, else a new one."""
    files = file_records(work)
    digest = content_digest(work, name, files, _incomplete_before(chain))
    fingerprint_out, same = output_fingerprint(chash, fingerprint, incomplete), []
    if unchanged(previous, name, digest) and not incomplete:
        assert previous is not None
        fingerprint_out = previous["output_fingerprint"]
        made = {"config_hash": previous.get("config_hash"), "input_fingerprint": previous.get("input_fingerprint")}
        earlier = [m for m in previous.get(SAME) or [] if isinstance(m, dict)]
        same = [m for m in [*earlier, made] if m != {"config_hash": chash, "input_fingerprint": fingerprint}]
        same = [m for i, m in enumerate(same) if m not in same[:i]]
    return {
        "writer": WRITER,
        "stage": name,
        "version": version,
        "config_hash": chash,
        "input_fingerprint": fingerprint,
        # where its input was: the chain of stages is found there when the folders are not side by side
        **({"input": str(chain[-1].resolve())} if chain else {}),
        "output_fingerprint": fingerprint_out,
        **({"incomplete": incomplete} if incomplete else {}),
        DIGEST: digest,
        **({SAME: same} if same else {}),
        "files": files,
    }


def unchanged(previous: dict[str, Any] | None, name: str, digest: str) -> bool:
    """Whether ``previous``, the marker of the finished output a stage replaces, recorded ``digest``
    for a complete output of the same stage."""
    return (
        isinstance(previous, dict)
        and previous.get("writer") == WRITER
        and previous.get("stage") == name
        and previous.get(DIGEST) == digest
        and not previous.get("incomplete")
        and isinstance(previous.get("output_fingerprint"), str)
    )


def came_out_as_before(name: str, stage_dir: Path, previous: dict[str, Any] | None) -> bool:
    """Whether the output just put in ``stage_dir`` has the content digest of the one it replaced
    (``previous``: that one's marker) and hands on its output fingerprint; said in the log."""
    from pipelines.marker import read_marker

    marker = read_marker(stage_dir) or {}
    same = (
        isinstance(previous, dict)
        and marker.get(DIGEST) == previous.get(DIGEST)
        and marker.get("output_fingerprint") == previous.get("output_fingerprint")
    )
    if same:
        log.info("%s: its output came out as before: the stages after it read it as it was", name)
    return same


def reused_after(result: Any, earlier: list[Any], after: str | None) -> str | None:
    """In a run, the stage made again whose output came out the same, for the stages after it:
    ``result``'s name when it is that stage, None once a stage is made with another output;
    a skipped ``result`` after one such stage (of ``earlier``) gets it as ``input_unchanged_after``."""
    if result.output_unchanged:
        return str(result.name)
    if not result.skipped:
        return None
    if after is not None and any(not r.skipped for r in earlier):
        result.input_unchanged_after = after
        log.info("%s: reused: its input came out unchanged when %s was made again", result.name, after)
    return after
