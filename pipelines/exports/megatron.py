"""``curate export megatron``: each phase's shards as megatron-core indexed datasets plus the blend Megatron-LM reads.

One task per shard on the cluster reads the shard (checked against its sha256), tokenizes its
documents once with the tokenizer the run counted with, and writes ``<phase>/<group>/part-NNNNN``
``.bin``/``.idx`` (:class:`~curation.export.megatron_index.IndexedWriter`):

- **pre-training** phases: every document of the shard once, its ids then the end-of-document id
  (EOD), FIM'd code as the shard holds it. Megatron's ``GPTDataset`` concatenates documents and
  cuts them into ``seq_length + 1`` windows; its ``BlendedDataset`` draws each prefix by its
  weight, so a prefix's weight is its share of the phase's planned tokens (with one EOD per
  document) and a group gets its planned epochs, fractions included, over ``train_samples``. A shard
  whose documents have different repeat factors (``mixture.language_repeat``) is one prefix per factor,
  ``part-NNNNN-r<factor>``, weighted by its class's own epochs (:mod:`pipelines.exports.megatron_classes`).
- **mid-training** phases (best-fit packed): every bin of the packing as exactly ``seq_length``
  tokens — its documents, each with its EOD, then pad ids and one EOD — and a file's bins as one sequence
  with one EOD after the last, so each bin is one sample of one pass (Megatron's sample index steps
  by ``seq_length`` and reads one token past a sample); the phase's prefixes are listed without weights,
  so Megatron takes each file once, blended by its size. Train with ``--reset-attention-mask --reset-position-ids --eod-mask-loss``: attention
  and positions restart after every EOD, and the loss skips every position whose input is an EOD
  (a padded bin's last position, whose label is the next sample's first token) and, megatron-core's own
  rule, every position whose label is the pad: of the padding only its last position, labelled with the
  closing EOD, keeps a loss. Padding with EODs made megatron-core's reset loop (Python, one pass per EOD)
  take minutes over a 128K sample. A full
  chunk of a long document ends without EOD: the packing puts its document's next chunk first in the
  next bin (:func:`curation.mixture.packing.best_fit_pack`), so its last position's label is its own next token.

``DIR/tokenizer/`` is a copy of the tokenizer the ids come from (its Hugging Face files), which every phase's flags
name (``--tokenizer-type HuggingFaceTokenizer --tokenizer-model DIR/tokenizer``); ``export.json``'s ``tokenizer_identity``
says which it is (:mod:`curation.export.tokenizer`: sha256, ids, package, the Hugging Face model that ships the same file).
``DIR/<phase>.data-args`` holds ``weight prefix …`` (a best-fit phase: ``prefix …``) with absolute prefixes, the form of
Megatron-LM's ``--data-args-path``; ``DIR/export.json`` the figures and the flags per phase. A weighted blend's flags
build as they are: where megatron-core's default ``mid_level_dataset_surplus`` is too small for the blend to draw
``train_samples`` (:func:`blend_surplus`), they carry the smallest ``--mid-level-dataset-surplus`` that is enough.
Every ``.bin``/``.idx`` left in the export is a prefix a ``.data-args`` reads: a shard of no document or of no weight,
and every file of a phase left out (no token, or fewer than one sample), is removed with the folders it leaves
empty. Whole samples round a phase down: :func:`draw_warnings` says where that leaves much of it undrawn, and a
group the blend would draw no sample from is left out of it (:func:`small_groups`), said in one line.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import dask
import numpy as np

from curation.export.megatron_index import IndexedWriter, token_dtype
from curation.export.sequences import packed_bins, padded, shard_ids, with_eod
from curation.export.tokenizer import check_trainer_eod, copy_for_trainer, identity
from curation.ingest.inputs import InputError
from curation.mixture.policy import languages
from curation.tokens import token_id, vocab_size
from pipelines.exports.common import SHARD_COLUMNS, RunExport, ShardJob, empty_reason, read_verified, shard_jobs
from pipelines.exports.megatron_classes import (
    Factors,
    fim_added,
    full_caps,
    language_tokens,
    planned_sizes,
    run_factors,
)
from pipelines.exports.megatron_draws import (
    MEGATRON_SURPLUS,
    SIMULATE_MAX,
    UNDRAWN,
    blend_draws,
    blend_surplus,
    draw_warnings,
)
from pipelines.io import write_json
from pipelines.progress import compute_with_progress

__all__ = ["MEGATRON_SURPLUS", "SIMULATE_MAX", "blend_draws", "blend_surplus", "draw_warnings", "export_megatron"]
PACKED_FLAGS = ["--reset-attention-mask", "--reset-position-ids", "--eod-mask-loss"]
log = logging.getLogger("curate.export")


def export_megatron(run: RunExport, work: Path, output: Path, client: Any, *, eod_token: str, pad_token: str,
                    quiet: bool = False) -> dict[str, Any]:
    """Write every phase of ``run`` into ``work`` (which becomes ``output``); return ``export.json``'s content."""
    tok = run.tokenizer
    ids_of, vocab = {"eod": token_id(tok, eod_token), "pad": token_id(tok, pad_token)}, vocab_size(tok)
    eod = ids_of["eod"]
    copy_for_trainer(tok, work / "tokenizer", eod_token, pad_token)  # what --tokenizer-model names: the ids' own tokenizer, beside them
    check_trainer_eod(work / "tokenizer", eod, eod_token, ids_of["pad"], pad_token)  # as Megatron loads it, before any shard is read
    jobs = [(job, m["seq_length"], m["packing"]["mode"], m.get("fim")) for m in run.manifests.values() for job in shard_jobs(m)]
    factors, caps = run_factors(run.stage_dir), full_caps(run.stage_dir)
    common = (str(run.stage_dir), str(work), tok, ids_of, vocab)
    tasks = [
        dask.delayed(write_shard)(job, *common, seq, mode, factors, fim, dask_key_name=f"megatron-{i}")
        for i, (job, seq, mode, fim) in enumerate(jobs)
    ]
    done = compute_with_progress(tasks, client, "export megatron", quiet, costs=[job[0].bytes for job in jobs]) if tasks else []
    records = [r for rs in done for r in rs]
    phases = {}
    for phase, manifest in run.manifests.items():
        mine = [r for r in records if r["phase"] == phase]
        phases[phase] = p = phase_blend(manifest, mine, Path(output).resolve(), caps)
        for level, note in p.pop("notes", []):
            if level == "warning":
                p.setdefault("warnings", []).append(note)  # said with the others
            else:
                log.info("%s", note)
        if not p["data_args"]:  # Megatron cannot build a blend of nothing: no file, no flags, and why
            p.update(empty=f"the phase replays no token ({empty_reason(manifest)}): there is nothing to train on, so no "
                     ".data-args file was written")
        elif not p["train_samples"]:  # --train-samples 0 built a blend of length 0: a trainer trained on nothing
            p.update(empty=f"the phase replays {p['replay_tokens']:,} tokens, fewer than one {p['seq_length']:,}-token sample: "
                     "Megatron can draw none, so no .data-args file and none of its .bin/.idx files were written (the datasets "
                     "export keeps its rows; a larger mixture.scale or budget gives samples)")
        if p.get("empty"):
            p.update(data_args=None, megatron_flags=[])
            p.pop("warnings", None)
            for g in p["groups"].values():
                g["prefixes"] = []
            continue
        (work / f"{phase}.data-args").write_text(p["data_args"] + "\n")
        p["data_args"] = f"{phase}.data-args"
        p["megatron_flags"] += ["--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model", str(Path(output).resolve() / "tokenizer")]
    listed = {x for p in phases.values() for g in p["groups"].values() for x in g["prefixes"]}
    for r in records:  # a shard of no document (megatron-core cannot map an empty .bin), of no weight, or of a phase left out
        if r["prefix"] not in listed:
            drop_prefix(work, r["prefix"])
    out = {
        "kind": "curation.export", "format": "megatron", "run": str(run.run_dir.resolve()), "tokenizer": tok,
        "tokenizer_identity": identity(tok),
        "eod_token": eod_token, "eod_id": eod, "pad_token": pad_token, "pad_id": ids_of["pad"], "dtype": token_dtype(vocab).name,
        "phases": phases,
    }
    write_json(work / "export.json", out)
    return out


def drop_prefix(work: Path, prefix: str) -> None:
    """Remove a prefix's ``.bin``/``.idx`` that no blend reads, and the folders it leaves empty."""
    for suffix in (".bin", ".idx"):
        (work / f"{prefix}{suffix}").unlink(missing_ok=True)
    folder = (work / prefix).parent
    while folder != work and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def write_shard(job: ShardJob, stage_dir: str, work: str, tok: str, ids_of: dict[str, int], vocab: int, seq_length: int, mode: str,
                factors: Factors, fim: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Tokenize one shard and write its indexed dataset (a pre-training shard of several replay classes:
    one per class); the figures of each prefix written. ``fim``: the manifest's FIM settings (its sentinels)."""
    eod, pad = ids_of["eod"], ids_of["pad"]
    table = read_verified(Path(stage_dir), job.path, job.sha256, SHARD_COLUMNS + (["lang", "fim"] if mode != "best_fit" else []))
    texts, docs = table.column("text").to_pylist(), table.column("doc_id").to_pylist()
    n_tokens = table.column("n_tokens").to_numpy()
    rec: dict[str, Any] = {"phase": job.phase, "group": job.group, "prefix": job.prefix, "shard": job.prefix}
    if mode != "best_fit":
        ids = shard_ids(texts, n_tokens, docs, tok, job.path)
        seqs = with_eod(ids, eod, docs, job.where, pad=pad)
        first = table.column("copy").to_numpy() == 0
        langs = languages(table.select(["lang"]).to_pandas())
        added = fim_added(table, n_tokens, tok, fim, ids)  # tokens FIM's sentinels and re-split add to each document
        factor = factors.of(job.group, table)
        values = [None] if factor is None else sorted(set(factor.tolist()))
        out = []
        for f in values:
            rows = np.arange(len(seqs)) if f is None else np.flatnonzero(factor == f)
            prefix = job.prefix if len(values) == 1 else f"{job.prefix}-r{f:g}"
            with IndexedWriter(Path(work) / prefix, vocab) as writer:
                for i in rows.tolist():
                    writer.add(seqs[i])
                mine = first[rows]
                by_lang: dict[str, int] = {}
                by_fim: dict[str, int] = {}
                for lang, n, a in zip(langs[rows][mine].tolist(), n_tokens[rows][mine].tolist(), added[rows][mine].tolist(), strict=True):
                    by_lang[lang] = by_lang.get(lang, 0) + int(n)
                    by_fim[lang] = by_fim.get(lang, 0) + int(a)
                out.append({**rec, "prefix": prefix, "factor": f, "sequences": len(writer.lengths), "tokens": int((n_tokens[rows] + 1).sum()),
                            "unique_tokens": int(n_tokens[rows][mine].sum()), "unique_documents": int(mine.sum()),
                            "languages": dict(sorted(by_lang.items())), "fim_languages": {k: v for k, v in sorted(by_fim.items()) if v}})
        return out
    with IndexedWriter(Path(work) / job.prefix, vocab) as writer:
        if job.packing_path is None or job.packing_sha256 is None:
            raise InputError(f"{job.path}: a best-fit phase's shard has no packing file in its manifest")
        spans = read_verified(Path(stage_dir), job.packing_path, job.packing_sha256).to_pandas()
        ids = shard_ids(texts, n_tokens, docs, tok, job.path, rows=spans["row"].to_numpy())
        bins = [b for b, _lengths, _docs in packed_bins(with_eod(ids, eod, docs, job.where, pad=pad), spans, seq_length)]
        if bins:
            # the file's bins as ONE sequence, padded to seq_length each, and one EOD after the last:
            # Megatron's samples step by seq_length through a sequence and read one token past it, so
            # the N bins are N samples of one pass. Sequences of their own would be shuffled, and one
            # pass of N bins in N sequences gives N - 1 samples: the last came from a reshuffled
            # second pass, one bin lost and another drawn twice in every file of more than one bin
            writer.add(np.concatenate([*(padded(b, seq_length, pad, eod) for b in bins), np.asarray([eod], dtype=np.int64)]))
        rec.update(sequences=len(writer.lengths), tokens=sum(len(b) for b in bins), samples=len(bins))
    return [rec]


def phase_blend(manifest: dict[str, Any], records: list[dict[str, Any]], root: Path, caps: dict[str, float] | None = None) -> dict[str, Any]:
    """The blend of one phase: a weight per prefix (sum 1), the samples a trainer asks for, the flags."""
    packed = manifest["packing"]["mode"] == "best_fit"
    seq = int(manifest["seq_length"])
    epochs: dict[str, float] = {}
    if packed:
        size = {r["prefix"]: r["samples"] for r in records}
    else:
        size, epochs = planned_sizes(manifest, records, caps or {})
    planned = sum(size.values())
    samples = int(planned if packed else planned // seq)  # Megatron drops a last partial sample
    small, notes = small_groups(manifest["phase"], size, records, seq, samples)
    group_of = {r["prefix"]: r["group"] for r in records}
    size = {p: n for p, n in size.items() if group_of[p] not in small}  # samples stay the plan's: the blend drew none of them
    total = sum(size.values())
    weights = {p: (n / total if total else 0.0) for p, n in sorted(size.items()) if n > 0}
    groups: dict[str, dict[str, Any]] = {}
    for r in records:
        g = groups.setdefault(r["group"], {"prefixes": [], "weight": 0.0, "tokens": 0, "sequences": 0})
        g["prefixes"] += [r["prefix"]] if r["prefix"] in weights else []  # only prefixes the blend reads
        g["weight"] += weights.get(r["prefix"], 0.0)
        g["tokens"] += r["tokens"]
        g["sequences"] += r["sequences"]  # Megatron's sequences: a best-fit file's bins are one
        if packed:
            g["samples"] = g.get("samples", 0) + r["samples"]  # its bins: one sample each
        elif r["prefix"] in weights:
            g.setdefault("epochs", {})[r["prefix"]] = epochs[r["prefix"]]  # each prefix's planned epochs (its replay class's)
        if r["group"] in small:
            g["left_out"] = small[r["group"]]
    for g in groups.values():
        g["weight"] = round(g["weight"], 12)
    flags = ["--data-args-path", str(root / f"{manifest['phase']}.data-args"), "--seq-length", str(seq), "--train-samples", str(samples),
             "--split", "100,0,0", *(PACKED_FLAGS if packed else [])]
    if not packed and weights:
        tokens = {r["prefix"]: r["tokens"] for r in records}
        listed = [float(f"{w:.12g}") for w in weights.values()]  # the weights as Megatron reads them from the .data-args
        surplus = blend_surplus(listed, [tokens[p] for p in weights], samples, seq)
        if surplus is not None:
            flags += ["--mid-level-dataset-surplus", f"{surplus:g}"]
    # a best-fit phase lists its prefixes without weights: Megatron then builds each file for one pass
    # and blends them by their sizes, so every bin is drawn once. With weights it builds each for its
    # share plus a 0.5 % surplus (mid_level_dataset_surplus): two passes, whose samples a file of 2 or 3
    # bins shuffles together (3 of 27 bins drawn twice, 3 never, in a phase of 14 such files)
    warnings = [] if packed else draw_warnings(manifest["phase"], weights, group_of, planned, samples, seq)
    langs = {} if packed else {"languages": language_tokens(manifest, records, epochs, set(weights))}
    return {
        "data_args": " ".join(str(root / p) if packed else f"{w:.12g} {root / p}" for p, w in weights.items()),
        "seq_length": seq, "packing": manifest["packing"]["mode"], "train_samples": samples,
        "tokens": int(sum(r["tokens"] for r in records if packed or r["prefix"] in weights)),  # what the listed files hold
        "planned_tokens": manifest["budget"]["planned_tokens"], "replay_tokens": manifest["budget"]["replay_tokens"],
        **langs, "groups": dict(sorted(groups.items())), "megatron_flags": flags, **({"warnings": warnings} if warnings else {}),
        "notes": notes,
    }


def small_groups(phase: str, size: dict[str, float], records: list[dict[str, Any]], seq: int, samples: int) -> tuple[dict[str, str], list[str]]:
    """The groups of a pre-training phase that Megatron's blend would draw no sample from (planned under one
    sample's worth: megatron-core's greedy index, :func:`blend_draws`): each left out of the blend (its files
    are not written), why, and the one line the export says, an info line while they hold under
    :data:`UNDRAWN` of the phase's planned tokens, else a warning. ``samples`` are the whole plan's: the blend drew
    none of them from these groups. A phase of under one sample is left out whole elsewhere."""
    group_of = {r["prefix"]: r["group"] for r in records if "samples" not in r}
    out: dict[str, float] = {}
    while True:
        keep = {p: n for p, n in sorted(size.items()) if p in group_of and group_of[p] not in out and n > 0}
        if not samples or not keep:
            return {}, []
        w = [float(f"{n / sum(keep.values()):.12g}") for n in keep.values()]  # as Megatron reads them from the .data-args
        w = [x / math.fsum(w) for x in w]
        drawn = blend_draws(w, samples) if samples * len(w) <= SIMULATE_MAX else [x * samples for x in w]
        per_group: dict[str, float] = {}
        for p, d in zip(keep, drawn, strict=True):
            per_group[group_of[p]] = per_group.get(group_of[p], 0.0) + d
        none = {g for g, d in per_group.items() if d < 1}
        if not none or none == set(per_group):
            break
        out.update({g: sum(n for p, n in size.items() if group_of.get(p) == g) for g in none})
    if not out:
        return {}, []
    why = {g: f"planned {n:,.0f} tokens with their EODs, under one {seq:,}-token sample's share: Megatron's blend would draw none"
           for g, n in sorted(out.items())}
    said = ", ".join(f"{g} ({n:,.0f} tokens)" for g, n in sorted(out.items()))
    level = "warning" if sum(out.values()) > UNDRAWN * sum(size.values()) else "info"
    return why, [(level, f"{phase}: left out of the blend, each planned under one {seq:,}-token sample's share so that Megatron's "
                         f"blend would draw none: {said}; a shorter seq_length or a larger budget gives them samples")]
