"""``curate export megatron``: each phase's shards as megatron-core indexed datasets plus the blend Megatron-LM reads.

One task per shard on the cluster reads the shard (checked against its sha256), tokenizes its
documents once with the tokenizer the run counted with, and writes ``<phase>/<group>/part-NNNNN``
``.bin``/``.idx`` (:class:`~curation.export.megatron_index.IndexedWriter`):

- **pre-training** phases: every document of the shard once, its ids then the end-of-document id
  (EOD), FIM'd code as the shard holds it. Megatron's ``GPTDataset`` concatenates documents and
  cuts them into ``seq_length + 1`` windows; its ``BlendedDataset`` draws each prefix by its
  weight, so a prefix's weight is its share of the phase's planned tokens (with one EOD per
  document) and a group gets its planned epochs, fractions included, over ``train_samples``.
- **mid-training** phases (best-fit packed): every bin of the packing as exactly ``seq_length``
  tokens — its documents, each with its EOD, then EOD padding — and a file's bins as one sequence
  with one EOD after the last, so each bin is one sample of one pass (Megatron's sample index steps
  by ``seq_length`` and reads one token past a sample); the phase's prefixes are listed without weights,
  so Megatron takes each file once, blended by its size. Train with ``--reset-attention-mask --reset-position-ids --eod-mask-loss``: attention
  and positions restart after every EOD, and the loss skips every position whose input is an EOD
  (the padding, and a padded bin's last position, whose label is the next sample's first token). A full
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
empty. Whole samples round a phase down: :func:`draw_warnings` says where that leaves much of it, or a group, undrawn.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import dask
import numpy as np

from curation.export.megatron_index import IndexedWriter, token_dtype
from curation.export.sequences import packed_bins, padded, shard_ids, with_eod
from curation.export.tokenizer import check_trainer_eod, copy_for_trainer, identity
from curation.ingest.inputs import InputError
from curation.tokens import token_id, vocab_size
from pipelines.exports.common import SHARD_COLUMNS, RunExport, ShardJob, empty_reason, read_verified, shard_jobs
from pipelines.io import write_json
from pipelines.progress import compute_with_progress

PACKED_FLAGS = ["--reset-attention-mask", "--reset-position-ids", "--eod-mask-loss"]
MEGATRON_SURPLUS = 0.005  # megatron-core's GPTDatasetConfig.mid_level_dataset_surplus (Megatron-LM's --mid-level-dataset-surplus) by default
SURPLUS_STEP = 0.001  # a surplus the flags list is a multiple of this
UNDRAWN = 0.05  # the share of a pre-training phase's planned tokens that rounding to whole samples may leave out unsaid
SIMULATE_MAX = 5_000_000  # blend draws x prefixes up to which the blend's index is replayed exactly (above: its proven bound)


def export_megatron(run: RunExport, work: Path, output: Path, client: Any, *, eod_token: str, quiet: bool = False) -> dict[str, Any]:
    """Write every phase of ``run`` into ``work`` (which becomes ``output``); return ``export.json``'s content."""
    tok = run.tokenizer
    eod, vocab = token_id(tok, eod_token), vocab_size(tok)
    copy_for_trainer(tok, work / "tokenizer", eod_token)  # what --tokenizer-model names: the ids' own tokenizer, beside them
    check_trainer_eod(work / "tokenizer", eod, eod_token)  # its eod as Megatron loads it, checked before any shard is read
    jobs = [(job, m["seq_length"], m["packing"]["mode"]) for m in run.manifests.values() for job in shard_jobs(m)]
    tasks = [dask.delayed(write_shard)(job, str(run.stage_dir), str(work), tok, eod, vocab, seq, mode, dask_key_name=f"megatron-{i}")
             for i, (job, seq, mode) in enumerate(jobs)]
    records = compute_with_progress(tasks, client, "export megatron", quiet, costs=[job.bytes for job, _, _ in jobs]) if tasks else []
    phases = {}
    for phase, manifest in run.manifests.items():
        mine = [r for r in records if r["phase"] == phase]
        phases[phase] = p = phase_blend(manifest, mine, Path(output).resolve())
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
        "eod_token": eod_token, "eod_id": eod, "dtype": token_dtype(vocab).name, "phases": phases,
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


def write_shard(job: ShardJob, stage_dir: str, work: str, tok: str, eod: int, vocab: int, seq_length: int, mode: str) -> dict[str, Any]:
    """Tokenize one shard and write its indexed dataset; its figures."""
    table = read_verified(Path(stage_dir), job.path, job.sha256, SHARD_COLUMNS)
    texts, docs = table.column("text").to_pylist(), table.column("doc_id").to_pylist()
    n_tokens = table.column("n_tokens").to_numpy()
    rec: dict[str, Any] = {"phase": job.phase, "group": job.group, "prefix": job.prefix}
    with IndexedWriter(Path(work) / job.prefix, vocab) as writer:
        if mode == "best_fit":
            if job.packing_path is None or job.packing_sha256 is None:
                raise InputError(f"{job.path}: a best-fit phase's shard has no packing file in its manifest")
            spans = read_verified(Path(stage_dir), job.packing_path, job.packing_sha256).to_pandas()
            ids = shard_ids(texts, n_tokens, docs, tok, job.path, rows=spans["row"].to_numpy())
            bins = [b for b, _lengths, _docs in packed_bins(with_eod(ids, eod, docs, job.where), spans, seq_length)]
            if bins:
                # the file's bins as ONE sequence, padded to seq_length each, and one EOD after the last:
                # Megatron's samples step by seq_length through a sequence and read one token past it, so
                # the N bins are N samples of one pass. Sequences of their own would be shuffled, and one
                # pass of N bins in N sequences gives N - 1 samples: the last came from a reshuffled
                # second pass, one bin lost and another drawn twice in every file of more than one bin
                writer.add(np.concatenate([*(padded(b, seq_length, eod) for b in bins), np.asarray([eod], dtype=np.int64)]))
            rec.update(sequences=len(writer.lengths), tokens=sum(len(b) for b in bins), samples=len(bins))
        else:
            ids = shard_ids(texts, n_tokens, docs, tok, job.path)
            for x in with_eod(ids, eod, docs, job.where):
                writer.add(x)
            first = table.column("copy").to_numpy() == 0
            rec.update(sequences=len(writer.lengths), tokens=int((n_tokens + 1).sum()),
                       unique_tokens=int(n_tokens[first].sum()), unique_documents=int(first.sum()))
    return rec


def planned_sizes(manifest: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, float]:
    """Tokens (with their EODs) each pre-training prefix gives at the plan's epochs: its group's
    planned tokens shared by the group's shards in proportion to their unique tokens. Megatron
    samples a fraction of an epoch as readily as a whole one, so the blend replays the plan itself,
    not the whole copies the Parquet shards round it to."""
    planned = {g["name"]: g["planned_tokens"] for g in manifest["groups"]}
    unique: dict[str, int] = {}
    for r in records:
        unique[r["group"]] = unique.get(r["group"], 0) + r["unique_tokens"]
    return {r["prefix"]: planned.get(r["group"], 0) * (r["unique_tokens"] + r["unique_documents"]) / unique[r["group"]]
            for r in records if unique[r["group"]]}


def phase_blend(manifest: dict[str, Any], records: list[dict[str, Any]], root: Path) -> dict[str, Any]:
    """The blend of one phase: a weight per prefix (sum 1), the samples a trainer asks for, the flags."""
    packed = manifest["packing"]["mode"] == "best_fit"
    seq = int(manifest["seq_length"])
    size = {r["prefix"]: r["samples"] for r in records} if packed else planned_sizes(manifest, records)
    total = sum(size.values())
    weights = {p: (n / total if total else 0.0) for p, n in sorted(size.items()) if n > 0}
    samples = int(total if packed else total // seq)  # Megatron drops a last partial sample
    groups: dict[str, dict[str, Any]] = {}
    for r in records:
        g = groups.setdefault(r["group"], {"prefixes": [], "weight": 0.0, "tokens": 0, "sequences": 0})
        g["prefixes"] += [r["prefix"]] if r["prefix"] in weights else []  # only prefixes the blend reads
        g["weight"] += weights.get(r["prefix"], 0.0)
        g["tokens"] += r["tokens"]
        g["sequences"] += r["sequences"]  # Megatron's sequences: a best-fit file's bins are one
        if packed:
            g["samples"] = g.get("samples", 0) + r["samples"]  # its bins: one sample each
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
    warnings = [] if packed else draw_warnings(manifest["phase"], weights, {r["prefix"]: r["group"] for r in records}, total, samples, seq)
    return {
        "data_args": " ".join(str(root / p) if packed else f"{w:.12g} {root / p}" for p, w in weights.items()),
        "seq_length": seq, "packing": manifest["packing"]["mode"], "train_samples": samples,
        "tokens": int(sum(r["tokens"] for r in records)),
        "planned_tokens": manifest["budget"]["planned_tokens"], "replay_tokens": manifest["budget"]["replay_tokens"],
        "groups": dict(sorted(groups.items())), "megatron_flags": flags, **({"warnings": warnings} if warnings else {}),
    }


def draw_warnings(phase: str, weights: dict[str, float], group_of: dict[str, str], total: float, samples: int, seq: int) -> list[str]:
    """What rounding a pre-training phase's planned tokens (``total``, with their EODs) down to whole
    samples leaves out: more than :data:`UNDRAWN` of them never drawn (Megatron drops the last partial
    sample), or a group the blend draws no sample from in ``samples`` (megatron-core's greedy index,
    :func:`blend_draws`; a group of less than one sample's share)."""
    if not samples or not weights:
        return []
    out, undrawn = [], 1 - samples * seq / total
    if undrawn > UNDRAWN:
        out.append(f"{phase}: --train-samples {samples:,} of {seq:,} tokens draw {samples * seq:,} of the phase's {round(total):,} "
                   f"planned tokens (with their EODs): Megatron drops the last partial sample, so {undrawn:.0%} of the plan is "
                   "never drawn; a shorter seq_length or a larger budget leaves less out")
    w = [float(f"{x:.12g}") for x in weights.values()]  # as Megatron reads them from the .data-args
    w = [x / math.fsum(w) for x in w]
    drawn = blend_draws(w, samples) if samples * len(w) <= SIMULATE_MAX else [x * samples for x in w]  # above: the expected draws
    per_group: dict[str, list[float]] = {}
    for p, x, d in zip(weights, w, drawn, strict=True):
        g = per_group.setdefault(group_of[p], [0.0, 0.0])
        g[0], g[1] = g[0] + x, g[1] + d
    missing = [f"{g} (weight {x:.3g})" for g, (x, d) in sorted(per_group.items()) if d < 1]
    if missing:
        out.append(f"{phase}: of its {samples:,} samples of {seq:,} tokens, Megatron's blend draws none from {', '.join(missing)}: "
                   "a group of less than one sample's share is not trained on in this phase; a shorter seq_length or a larger "
                   "budget gives it samples")
    return out


def blend_surplus(weights: list[float], tokens: list[int], samples: int, seq_length: int) -> float | None:
    """The ``mid_level_dataset_surplus`` a weighted blend needs to draw ``samples`` in megatron-core
    (0.16's BlendedMegatronDatasetBuilder), or ``None`` where its default (0.005) is enough.

    Megatron normalises the weights ``w``, builds prefix ``i`` (``tokens[i]`` tokens with their EODs)
    as a GPTDataset of ``ceil(ceil(n·w_i)·(1 + surplus))`` samples — whole epochs, so
    ``(e·tokens − 1) // seq_length`` samples for the fewest epochs ``e`` that hold them — and blends
    ``Σ ceil(n·w_i)`` draws (more than ``n`` when the weights are many) with its greedy index, which
    refuses to build if it draws more samples from a prefix than it built. Those draws are replayed
    exactly (below :data:`SIMULATE_MAX`) or bounded: the greedy index draws from a prefix only while
    it is behind its share, so after ``N`` draws it has drawn at most ``w_i·(N − 1) + 1``. The
    surplus returned is the smallest multiple of :data:`SURPLUS_STEP` that builds every prefix for
    its draws, checked with Megatron's own arithmetic."""
    if not weights or samples <= 0:
        return None
    w = (np.asarray(weights, dtype=np.float64) / np.sum(np.asarray(weights, dtype=np.float64))).tolist()  # megatron's normalize()
    target = [math.ceil(samples * x) for x in w]
    drawn = blend_draws(w, sum(target))

    def built(surplus: float) -> list[int]:  # len() of each GPTDataset megatron builds at this surplus
        out = []
        for t, n_tok in zip(target, tokens, strict=True):
            asked = int(math.ceil(t * (1 + surplus)))
            epochs = max(1, -(-(asked * seq_length + 1) // n_tok))
            out.append((epochs * n_tok - 1) // seq_length)
        return out

    def enough(surplus: float) -> bool:
        return all(b >= d for b, d in zip(built(surplus), drawn, strict=True))

    if enough(MEGATRON_SURPLUS):
        return None
    need = max((d - t) / t for d, t in zip(drawn, target, strict=True) if t)  # building each prefix for its draws is enough
    k = max(1, math.floor(need / SURPLUS_STEP))
    while k > 1 and enough(round((k - 1) * SURPLUS_STEP, 6)):  # whole epochs may need less
        k -= 1
    while not enough(round(k * SURPLUS_STEP, 6)):
        k += 1
    return round(k * SURPLUS_STEP, 6)


def blend_draws(weights: list[float], size: int) -> list[int]:
    """How many samples megatron-core's ``build_blending_indices`` (its C++ extension) draws from each
    dataset in a blend of ``size``: at every step the dataset furthest behind ``w_i·max(step, 1)``,
    the first on a tie. Replayed step by step while ``size × datasets`` is at most
    :data:`SIMULATE_MAX`; above, each count's bound ``floor(w_i·max(size − 1, 1)) + 1``."""
    k = len(weights)
    if size * k > SIMULATE_MAX:
        return [min(size, math.floor(x * max(size - 1, 1) * (1 + 1e-12) + 1 + 1e-9)) for x in weights]
    counts = [0] * k
    for step in range(size):
        x = float(max(step, 1))
        best, best_err = 0, weights[0] * x - counts[0]
        for i in range(1, k):
            err = weights[i] * x - counts[i]
            if err > best_err:
                best, best_err = i, err
        counts[best] += 1
    return counts
