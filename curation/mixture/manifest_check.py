"""Manifest validation: the JSON Schema, internal sums, and the files a manifest names.

``curate verify`` and ``curate manifest validate`` call :func:`validate_manifest`; the mixture
stage checks each manifest against the schema before it writes it.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from curation.mixture.manifest import file_sha256


def load_schema() -> dict[str, Any]:
    """The manifest JSON Schema shipped in the package."""
    return json.loads((resources.files("curation") / "schemas" / "manifest.schema.json").read_text())


def validate_schema(manifest: Mapping[str, Any]) -> list[str]:
    """Schema errors of ``manifest`` (empty when valid)."""
    validator = _schema_validator()
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in sorted(validator.iter_errors(manifest), key=str)]


@functools.lru_cache(maxsize=1)
def _schema_validator() -> Any:
    """The schema's validator, built once per process (the mixture stage checks one manifest per phase)."""
    import jsonschema

    return jsonschema.Draft202012Validator(load_schema())


def validate_sums(manifest: Mapping[str, Any]) -> list[str]:
    """Internal consistency: group sums = shard sums, totals = group sums, weights sum to 1, replayed tokens = their shards' sum."""
    errors: list[str] = []
    for g in manifest["groups"]:
        for key in ("documents", "tokens"):
            total = sum(s[key] for s in g["shards"])
            if total != g[key]:
                errors.append(f"group {g['name']}: {key} {g[key]} != sum over its shards {total}")
        if g.get("packing"):
            files_tokens = sum(f["tokens"] for f in g["packing"]["files"])
            if files_tokens != g["packing"]["tokens"]:
                errors.append(f"group {g['name']}: packing tokens {g['packing']['tokens']} != sum over its files {files_tokens}")
    totals = manifest["totals"]
    for key in ("documents", "tokens"):
        total = sum(g[key] for g in manifest["groups"])
        if total != totals[key]:
            errors.append(f"totals.{key} {totals[key]} != sum over groups {total}")
    errors += _check_weights(manifest)
    for g in manifest["groups"]:
        if g["cap"] is not None and g["epochs"] > g["cap"] + 1e-9:
            errors.append(f"group {g['name']}: epochs {g['epochs']} above its cap {g['cap']}")
        if g.get("replay_cap") is not None and g["replay_epochs"] > g["replay_cap"] + 1e-6:
            errors.append(f"group {g['name']}: replays {g['replay_epochs']} epochs, above its replay cap {g['replay_cap']}")
        replay = sum(s.get("replay_tokens", s["tokens"]) for s in g["shards"])
        if replay != g["replay_tokens"]:
            errors.append(f"group {g['name']}: replay_tokens {g['replay_tokens']} != sum over its shards {replay}")
        errors += _check_epochs(g) if manifest.get("repeats", "weights") == "weights" else []
    replay = sum(g["replay_tokens"] for g in manifest["groups"])
    if replay != manifest["budget"]["replay_tokens"]:
        errors.append(f"budget.replay_tokens {manifest['budget']['replay_tokens']} != sum over groups {replay}")
    return errors


def _check_epochs(g: Mapping[str, Any]) -> list[str]:
    """A group's epochs against its tokens: the plan's ``planned_tokens`` is ``epochs`` × its unique
    tokens (rounded), and ``replay_epochs`` is replayed over unique tokens, where the shards hold
    each document once (``repeats: weights``; materialized copies leave out the documents a
    fractional epoch does not show, so their unique tokens are not the plan's). The plan counts a
    document's own text; FIM's sentinels add tokens to the shards, so a group with FIM-transformed
    documents is not checked (how many tokens the sentinels add depends on the tokenizer: a few with
    Qwen's, 60 % more with ``tokenizer=whitespace``)."""
    unique = g.get("unique_tokens")
    if not unique or any(n for kind, n in (g.get("fim") or {}).items() if kind != "none"):
        return []
    errors = []
    if abs(g["epochs"] * unique - g["planned_tokens"]) > 1 + 1e-6 * g["planned_tokens"]:
        errors.append(f"group {g['name']}: epochs {g['epochs']} x unique_tokens {unique} is not its planned_tokens {g['planned_tokens']}")
    if abs(g["replay_epochs"] * unique - g["replay_tokens"]) > 1 + 1e-6 * g["replay_tokens"]:
        errors.append(f"group {g['name']}: replay_epochs {g['replay_epochs']} x unique_tokens {unique} is not its replay_tokens {g['replay_tokens']}")
    return errors


def non_finite(value: Any, where: str = "") -> list[str]:
    """Paths of the NaN and infinite numbers in a parsed JSON document (JSON has none; Python writes them)."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [f"{where or '<root>'} is {value}"]
    if isinstance(value, dict):
        return [e for k, v in value.items() for e in non_finite(v, f"{where}/{k}" if where else str(k))]
    if isinstance(value, list):
        return [e for i, v in enumerate(value) for e in non_finite(v, f"{where}/{i}")]
    return []


#: Weights are written rounded to 12 decimals.
WEIGHT_TOLERANCE = 1e-9


def _check_weights(manifest: Mapping[str, Any]) -> list[str]:
    """Each group's weight is its planned tokens' share of the phase's planned tokens (the plan's
    sampling weights), so the weights sum to 1 (or are all 0 when nothing is planned)."""
    groups = manifest["groups"]
    errors = []
    planned = sum(g.get("planned_tokens", 0) for g in groups)
    budget = manifest["budget"].get("planned_tokens")
    if budget is not None and budget != planned:
        errors.append(f"budget.planned_tokens {budget} != sum over groups {planned}")
    for g in groups:
        w = g["weight"]
        if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
            errors.append(f"group {g['name']}: weight {w} is not a finite number ≥ 0")
            continue
        if "planned_tokens" in g:
            share = g["planned_tokens"] / planned if planned else 0.0
            if abs(w - share) > WEIGHT_TOLERANCE:
                errors.append(f"group {g['name']}: weight {w} is not its planned tokens' share {share:.12f} "
                              f"({g['planned_tokens']} of {planned})")
    weights = sum(g["weight"] for g in groups)
    if groups and planned and not abs(weights - 1.0) <= 1e-6:
        errors.append(f"group weights sum to {weights}, not 1")
    return errors


def validate_files(manifest: Mapping[str, Any], base: Path) -> list[str]:
    """Each shard and packing file: exists, bytes, sha256, rows and token sum as recorded."""
    errors: list[str] = []
    for g in manifest["groups"]:
        for s in g["shards"]:
            errors += _check_file(base, s, rows_key="documents", tokens_col="n_tokens", tokens_key="tokens")
        for f in (g.get("packing") or {}).get("files", []):
            file_errors = _check_file(base, f, rows_key=None, tokens_col="length", tokens_key="tokens")
            errors += file_errors
            if not file_errors:
                seqs = pq.read_table(base / f["path"], columns=["sequence"]).column("sequence")
                n = len(pc.unique(seqs)) if len(seqs) else 0
                if n != f["sequences"]:
                    errors.append(f"{f['path']}: {n} sequences, manifest says {f['sequences']}")
    return errors


def _check_file(base: Path, rec: Mapping[str, Any], rows_key: str | None, tokens_col: str, tokens_key: str) -> list[str]:
    path = (base / rec["path"]).resolve()
    if not path.is_relative_to(base.resolve()):
        return [f"{rec['path']}: outside the manifest's base folder"]
    if not path.is_file():
        return [f"{rec['path']}: missing"]
    errors = []
    size = path.stat().st_size
    if size != rec["bytes"]:
        errors.append(f"{rec['path']}: {size} bytes, manifest says {rec['bytes']}")
    digest = file_sha256(path)
    if digest != rec["sha256"]:
        errors.append(f"{rec['path']}: sha256 {digest[:12]}…, manifest says {rec['sha256'][:12]}…")
        return errors
    table = pq.read_table(path, columns=[tokens_col])
    if rows_key and table.num_rows != rec[rows_key]:
        errors.append(f"{rec['path']}: {table.num_rows} rows, manifest says {rec[rows_key]}")
    tokens = pc.sum(table.column(tokens_col)).as_py() or 0
    if tokens != rec[tokens_key]:
        errors.append(f"{rec['path']}: {tokens} tokens, manifest says {rec[tokens_key]}")
    return errors


def validate_run(path: Path, manifest: Mapping[str, Any]) -> list[str]:
    """For a manifest inside a run folder (``RUN/NN_mixture/manifests/x.json``): its stage is one
    of the run's current stages, and ``upstream`` cites exactly the current stages before it (in a
    folder of stages run one at a time whose chain begins in another folder, it ends with them:
    :func:`_begins_elsewhere`)."""
    from curation.stats.run_state import is_stage_folder, read_json, run_state

    stage_dir = Path(path).resolve().parent.parent
    run_dir = stage_dir.parent
    if Path(path).resolve().parent.name != "manifests" or not (stage_dir / "_SUCCESS").exists():
        return []
    state = run_state(run_dir)
    if state.status == "unrecorded" and len([p for p in run_dir.iterdir() if is_stage_folder(p)]) < 2:
        return []  # a mixture run on its own (`curate mixture --output DIR`): no run around it
    if stage_dir.name in state.stale:
        return [f"{stage_dir.name} is not the run's current output ({state.stale[stage_dir.name]}): "
                "this manifest does not describe the run; re-run the recipe"]
    if stage_dir not in state.current:
        return [f"{stage_dir.name} is not a finished stage of the run {run_dir}"]
    before = state.current[:state.current.index(stage_dir)]
    markers = [(folder.name, read_json(folder / "_SUCCESS") or {}) for folder in before]
    expected = [(name, marker.get("config_hash"), marker.get("output_fingerprint")) for name, marker in markers]
    cited = [(u.get("folder"), u.get("config_hash"), u.get("output_fingerprint"))
             for u in manifest.get("upstream") or [] if isinstance(u, dict)]
    if not cites_current(cited, markers) and not _begins_elsewhere(state, run_dir, cited, expected):
        return [f"upstream cites {[c[0] for c in cited]}, but the run's current stages before "
                f"{stage_dir.name} are {[e[0] for e in expected]} (or their config hashes differ)"]
    return []


def cites_current(cited: list[tuple[Any, ...]], markers: list[tuple[str, dict[str, Any]]]) -> bool:
    """Whether ``cited`` (folder, config hash, output fingerprint of each upstream stage) is the chain of
    the current stages, each ``(folder name, marker)``. A stage made again whose output came out as
    before keeps its output fingerprint and records the earlier runs that made it (``same_output_as``:
    config hash and input fingerprint, :mod:`pipelines.restat`): a manifest written before may cite
    such a run, and the stages before it as that run read them (the output fingerprint it cites just
    before is that run's input fingerprint); they are not the current ones then."""
    if len(cited) != len(markers):
        return False
    for i in range(len(markers) - 1, -1, -1):
        (name, marker), (folder, chash, made) = markers[i], cited[i]
        if folder != name or made != marker.get("output_fingerprint"):
            return False
        came = cited[i - 1][2] if i else marker.get("input_fingerprint")
        if chash == marker.get("config_hash") and came == marker.get("input_fingerprint"):
            continue
        earlier = [m for m in marker.get("same_output_as") or [] if isinstance(m, dict)]
        return any(m.get("config_hash") == chash and (i == 0 or m.get("input_fingerprint") == came) for m in earlier)
    return True


def _begins_elsewhere(state: Any, run_dir: Path, cited: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> bool:
    """Whether ``cited`` is the chain of a folder of stages run one at a time (no run record) whose
    first stage read a stage folder outside it (``curate semdedup --input RUN/20_minhash_dedup
    --output DIR/30_semdedup``, then the later stages into ``DIR``): the manifest cites the whole
    chain back to ingest, which ends with the folder's own stages, and the stage it cites just before
    them made the output the first one's marker says it read (its ``input``, outside the folder, and
    ``input_fingerprint``). A run with a record cites its own stages alone."""
    from curation.stats.run_state import MARKER, read_json

    if state.status != "unrecorded" or not state.current or len(cited) <= len(expected):
        return False
    first = read_json(state.current[0] / MARKER) or {}
    source = first.get("input")
    if not isinstance(source, str) or not source or Path(source).resolve().is_relative_to(run_dir.resolve()):
        return False
    head, tail = cited[:len(cited) - len(expected)], cited[len(cited) - len(expected):]
    return tail == expected and head[-1][2] == first.get("input_fingerprint")


def validate_manifest(path: Path, check_files: bool = True) -> list[str]:
    """Every problem with the manifest at ``path``: schema, sums, and (optionally) its files."""
    path = Path(path)
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return [f"{path}: cannot be read as JSON ({exc})"]
    errors = validate_schema(manifest) + non_finite(manifest)
    if errors:
        return errors
    errors += validate_sums(manifest)
    errors += validate_run(path, manifest)
    if check_files:
        errors += validate_files(manifest, (path.parent / manifest["base_dir"]))
    return errors
