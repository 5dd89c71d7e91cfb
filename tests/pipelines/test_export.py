"""`curate export`: what the trainer's own loaders read (megatron-core, datasets.load_from_disk) is the plan."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main as curate

REPO = Path(__file__).resolve().parents[2]
PRETRAIN = ["pretrain_phase1", "pretrain_phase2"]
MIDTRAIN = ["midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"]


@pytest.fixture(scope="module")
def run(finished_run):
    return finished_run  # the whole recipe on the sample at its CPU settings (tests/pipelines/conftest.py)


@pytest.fixture(scope="module")
def megatron_export(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("megatron") / "export"
    assert curate(["export", "megatron", str(run), "--output", str(out), "--workers", "2", "--quiet"]) == 0  # a real LocalCluster
    return out


@pytest.fixture(scope="module")
def datasets_export(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("datasets") / "export"
    assert curate(["export", "datasets", str(run), "--output", str(out), "--scheduler", "synchronous", "--quiet"]) == 0
    return out


def manifest(run: Path, phase: str) -> dict:
    return json.loads((run / "80_mixture" / "manifests" / f"{phase}.json").read_text())


def planned_shares(m: dict) -> dict[str, float]:
    total = sum(g["planned_tokens"] for g in m["groups"])
    return {g["name"]: g["planned_tokens"] / total for g in m["groups"] if g["planned_tokens"]}


def total_variation(a: dict[str, float], b: dict[str, float]) -> float:
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


MEGATRON_LOADER = r'''
import json, os, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np, torch, torch.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[3])
dist.init_process_group("gloo", rank=0, world_size=1)
from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
from megatron.core.datasets.utils import get_blend_from_list
out, phase = sys.argv[1], sys.argv[2]
exp = json.load(open(os.path.join(out, "export.json")))
p = exp["phases"][phase]
blend = get_blend_from_list(open(os.path.join(out, p["data_args"])).read().split())
class Tokenizer:
    eod = exp["eod_id"]; pad = exp["pad_id"]; vocab_size = 151669; unique_identifiers = {"class": "test"}
packed = p["packing"] == "best_fit"
cfg = GPTDatasetConfig(random_seed=1, sequence_length=p["seq_length"], blend=blend, split="100,0,0", tokenizer=Tokenizer(),
                       reset_position_ids=packed, reset_attention_mask=packed, eod_mask_loss=packed, create_attention_mask=False,
                       path_to_cache=os.path.join(sys.argv[4], phase))
n = p["train_samples"] * int(sys.argv[5])
train, _, _ = BlendedMegatronDatasetBuilder(GPTDataset, [n, 0, 0], lambda: True, cfg).build()
drawn, samples = {}, []
for i in range(n):
    ds = train.datasets[int(train.dataset_index[i])] if hasattr(train, "datasets") else train  # one prefix: no blend
    group = "/".join(ds.dataset_path.split("/")[-3:-1])
    drawn[group] = drawn.get(group, 0) + 1
    if packed:
        s = train[i]
        samples.append({"group": group, "tokens": s["tokens"].tolist(), "last_loss": float(s["loss_mask"][-1])})
json.dump({"drawn": drawn, "samples": samples}, sys.stdout)
'''


def megatron_draws(export: Path, phase: str, tmp: Path, passes: int = 1) -> dict:
    """What megatron-core's BlendedMegatronDatasetBuilder draws for ``phase`` over ``passes`` times its
    ``train_samples`` (in a process of its own: gloo, torch)."""
    pytest.importorskip("megatron.core")
    port = str(29500 + (os.getpid() + len(phase)) % 400)
    proc = subprocess.run([sys.executable, "-c", MEGATRON_LOADER, str(export), phase, port, str(tmp), str(passes)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_megatron_indexed_datasets_hold_each_document_once_with_its_eod(run, megatron_export):
    from megatron.core.datasets.indexed_dataset import IndexedDataset  # noqa: F401 - the trainer's reader must import

    from curation.tokens import encode

    exp = json.loads((megatron_export / "export.json").read_text())
    m = manifest(run, "pretrain_phase1")
    g = next(g for g in m["groups"] if g["name"].startswith("code/"))  # FIM'd code, as the shard holds it
    shard = pd.read_parquet(run / "80_mixture" / g["shards"][0]["path"])
    ds = IndexedDataset(str(megatron_export / "pretrain_phase1" / g["name"] / "part-00000"))
    assert len(ds) == len(shard)
    ids = encode(shard["text"].tolist(), "qwen")
    for i in range(len(shard)):
        assert ds[i].tolist() == [*ids[i].tolist(), exp["eod_id"]]
    assert exp["dtype"] == "int32" and exp["tokenizer"] == m["tokenizer"] == "qwen"
    # every prefix export.json lists loads (a shard of no document writes none: megatron-core cannot map an empty .bin)
    listed = [p for ph in exp["phases"].values() for g in ph["groups"].values() for p in g["prefixes"]]
    assert all(len(IndexedDataset(str(megatron_export / p))) > 0 for p in listed)
    assert sorted(str(p.relative_to(megatron_export).with_suffix("")) for p in megatron_export.rglob("*.bin")) == sorted(listed)
    empty = [g["name"] for ph in ("midtrain_long_context_128k",) for g in manifest(run, ph)["groups"] if g["replay_tokens"] == 0]
    assert empty and all(exp["phases"]["midtrain_long_context_128k"]["groups"][g]["prefixes"] == [] for g in empty)
    # a phase that replays nothing has no .data-args (Megatron cannot build an empty blend) and says why; the others have one
    for phase, p in exp["phases"].items():
        nothing = manifest(run, phase)["budget"]["replay_tokens"] == 0
        assert (megatron_export / f"{phase}.data-args").is_file() is (not nothing) is (p["data_args"] is not None), phase
        assert bool(p.get("empty")) is nothing and (p["megatron_flags"] == []) is nothing


@pytest.mark.parametrize("phase", PRETRAIN)
def test_megatron_blend_draws_the_planned_shares(run, megatron_export, phase, tmp_path):
    m = manifest(run, phase)
    p = json.loads((megatron_export / "export.json").read_text())["phases"][phase]
    prefixes = (megatron_export / p["data_args"]).read_text().split()[1::2]
    assert all(Path(x).is_absolute() and Path(x + ".bin").is_file() and Path(x + ".idx").is_file() for x in prefixes)
    # the samples a trainer asks for hold the planned tokens (with one EOD per document)
    with_eod = {g["name"]: g["planned_tokens"] * (1 + g["unique_documents"] / g["unique_tokens"]) for g in m["groups"] if g["unique_tokens"]}
    assert p["train_samples"] * p["seq_length"] == pytest.approx(sum(with_eod.values()), rel=0.02, abs=p["seq_length"])
    # the loader's draws over 20 passes (the sample's phases are 50-110 samples: one pass quantises shares by 1/50)
    draws = megatron_draws(megatron_export, phase, tmp_path, passes=20)["drawn"]
    total = sum(draws.values())
    assert total == 20 * p["train_samples"] > 0
    shares = {g: n / total for g, n in draws.items()}
    assert total_variation(shares, {g: v / sum(with_eod.values()) for g, v in with_eod.items()}) <= 0.01
    assert total_variation(shares, planned_shares(m)) <= 0.02


@pytest.mark.parametrize("phase", MIDTRAIN)
def test_megatron_draws_each_best_fit_bin_as_one_sample(run, megatron_export, datasets_export, phase, tmp_path):
    import datasets

    m = manifest(run, phase)
    p = json.loads((megatron_export / "export.json").read_text())["phases"][phase]
    if not p["train_samples"]:
        pytest.skip(f"{phase} replays no bin on the sample")
    assert "--eod-mask-loss" in p["megatron_flags"] and "--reset-attention-mask" in p["megatron_flags"]
    eod = json.loads((megatron_export / "export.json").read_text())["eod_id"]
    bins = datasets.load_from_disk(str(datasets_export / phase))
    padded = {as_sample(ids, m["seq_length"], eod) for ids in bins["input_ids"]}
    for s in megatron_draws(megatron_export, phase, tmp_path)["samples"]:
        assert len(s["tokens"]) == m["seq_length"]
        assert tuple(s["tokens"]) in padded  # one whole bin, never split or merged with the next
        assert s["last_loss"] == 0.0  # the label that crosses into the next sample is masked (input EOD)


def as_sample(ids: list[int], seq_length: int, eod: int) -> tuple[int, ...]:
    """A best-fit bin as megatron-core gives it: its documents, the padding (pad ids, which it feeds as 0), one EOD last."""
    return tuple(ids + ([0] * (seq_length - len(ids) - 1) + [eod] if len(ids) < seq_length else []))


@pytest.mark.parametrize(("phase", "budget", "shard_mb"), [("midtrain_reasoning_32k", 400_000, 256.0), ("midtrain_repo_code_32k", 600_000, 0.1)])
def test_megatron_draws_every_bin_of_a_file_of_many_bins_once(run, tmp_path, phase, budget, shard_mb):
    """Data files of several bins (a 32K reasoning phase given a larger budget), in one file a group
    or in many small ones: one pass of the phase's train_samples draws each bin exactly once (a
    file's bins as sequences of their own gave one pass one sample fewer, the last drawn from a
    reshuffled second pass; weighted prefixes made Megatron build each file for two passes, whose
    samples a file of 2 or 3 bins shuffled together)."""
    import collections

    import datasets

    alone = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(alone), "--scheduler", "synchronous", "--quiet",
                   "--profile", "cpu", f"mixture.phases.{phase}.budget={{tokens: {budget}}}", f"mixture.shard_target_mb={shard_mb}"]) == 0
    out, hf = tmp_path / "megatron", tmp_path / "datasets"
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", phase, "--quiet"]) == 0
    assert curate(["export", "datasets", str(alone), "--output", str(hf), "--phase", phase, "--quiet"]) == 0
    m = json.loads((alone / "manifests" / f"{phase}.json").read_text())
    eod = json.loads((out / "export.json").read_text())["eod_id"]
    bins = collections.Counter(as_sample(ids, m["seq_length"], eod) for ids in datasets.load_from_disk(str(hf / phase))["input_ids"])
    per_file = collections.Counter(r["group"] for r in datasets.load_from_disk(str(hf / phase)))
    assert max(per_file.values()) > 1  # a group of one shard holds several bins
    drawn = collections.Counter(tuple(s["tokens"]) for s in megatron_draws(out, phase, tmp_path)["samples"])
    assert drawn == bins
    groups = json.loads((out / "export.json").read_text())["phases"][phase]["groups"]
    assert {g: v["samples"] for g, v in groups.items()} == dict(per_file)  # export.json: each group's bins
    files = [x for g in groups.values() for x in g["prefixes"]]
    assert (len(files) > 2) is (shard_mb < 1)  # small shards: several files of 2-3 bins


@pytest.mark.parametrize("phase", PRETRAIN)
def test_datasets_rows_replay_the_plan_in_a_shuffled_order(run, datasets_export, phase):
    import datasets

    m = manifest(run, phase)
    ds = datasets.load_from_disk(str(datasets_export / phase))
    rows = ds.to_pandas()
    assert {"doc_id", "copy", "text", "group", "n_tokens"} <= set(rows.columns)
    got = rows.groupby("group")["n_tokens"].sum()
    assert got.to_dict() == {g["name"]: g["replay_tokens"] for g in m["groups"] if g["replay_tokens"]}  # the shards' replay, exactly
    assert m["budget"]["met"]  # on the sample the replay is within 2 % of the plan (the manifest says so otherwise)
    assert total_variation((got / got.sum()).to_dict(), planned_shares(m)) <= 0.02
    assert got.sum() == pytest.approx(m["budget"]["planned_tokens"], rel=0.02)
    # each document as many times as the plan uses it, copies numbered 0..k-1
    copies = pd.concat([pd.read_parquet(run / "80_mixture" / s["path"], columns=["doc_id", "copies"]) for g in m["groups"] for s in g["shards"]])
    shown = rows.groupby("doc_id")["copy"].agg(["count", "max"])
    want = copies.set_index("doc_id")["copies"]
    assert shown["count"].to_dict() == want[want > 0].to_dict()
    assert (shown["max"] == shown["count"] - 1).all()
    # the rows are shuffled across groups, not one group after another
    runs = (rows["group"] != rows["group"].shift()).sum()
    assert runs > 3 * rows["group"].nunique()


def test_datasets_midtraining_rows_are_packed_sequences(run, datasets_export):
    import datasets

    for phase in MIDTRAIN:
        m = manifest(run, phase)
        ds = datasets.load_from_disk(str(datasets_export / phase))
        assert set(ds.column_names) >= {"input_ids", "document_lengths", "group"}
        for row in ds:
            assert 0 < len(row["input_ids"]) <= m["seq_length"]
            assert sum(row["document_lengths"]) == len(row["input_ids"])
        packing = sum(g["packing"]["sequences"] for g in m["groups"] if g.get("packing"))
        assert len(ds) == packing


def test_datasets_random_truncation_cuts_long_documents_at_a_seeded_offset(run, tmp_path):
    import datasets

    from curation.tokens import encode

    out = tmp_path / "trunc"
    args = ["export", "datasets", str(run), "--output", str(out), "--phase", "pretrain_phase1", "--truncation", "random",
            "--scheduler", "synchronous", "--quiet"]
    assert curate(args) == 0
    rows = datasets.load_from_disk(str(out / "pretrain_phase1")).to_pandas()
    long = rows[rows["n_tokens"] + 1 > 4096]
    assert len(long) and (long["input_ids"].map(len) == 4096).all()
    short = rows[rows["n_tokens"] + 1 <= 4096]
    assert (short["input_ids"].map(len) == short["n_tokens"] + 1).all()  # whole, with its EOD
    r = long.iloc[0]
    full = encode([r["text"]], "qwen")[0]
    assert full[r["truncated_at"]:r["truncated_at"] + 4096].tolist() == list(r["input_ids"])
    assert long["truncated_at"].nunique() > 1  # offsets are drawn, not all at the start
    # `truncated` tells a window cut at offset 0 from a whole document (both have truncated_at 0)
    assert long["truncated"].all() and not short["truncated"].any() and (short["truncated_at"] == 0).all()
    again = tmp_path / "trunc2"
    assert curate([*args[:4], str(again), *args[5:]]) == 0
    assert (again / "pretrain_phase1" / "data-00000-of-00001.arrow").read_bytes() == (out / "pretrain_phase1" / "data-00000-of-00001.arrow").read_bytes()
    # export.json says what a trainer reads per group (the windows), and warns where the mix moves off the plan
    phase = json.loads((out / "export.json").read_text())["phases"]["pretrain_phase1"]
    read = rows.assign(n=rows["input_ids"].map(len)).groupby("group")["n"].sum()
    assert {g: v["trained_tokens"] for g, v in phase["groups"].items()} == read.to_dict()
    assert phase["trained_tokens"] == int(read.sum()) < sum(v["tokens"] for v in phase["groups"].values())
    planned = {g: v["planned_tokens"] / phase["planned_tokens"] for g, v in phase["groups"].items()}
    moved = [g for g in planned if abs(read[g] / read.sum() - planned[g]) > 0.02]
    assert moved and all(f"{g} {planned[g]:.3f} -> " in phase["warnings"][0] for g in moved)
    assert "export without --truncation" in phase["warnings"][0]


def test_exports_refuse_unfinished_or_damaged_runs_and_write_nothing(run, tmp_path, caplog):
    unfinished = tmp_path / "unfinished"
    shutil.copytree(run, unfinished)
    (unfinished / "run.json").unlink()
    out = tmp_path / "out"
    assert curate(["export", "megatron", str(unfinished), "--output", str(out), "--scheduler", "synchronous"]) == 4
    assert "not a finished run" in caplog.text and not out.exists()
    # stages run one by one leave no run.json: the message names the mixture folder to export instead
    assert f"its mixture stage finished: export that folder ({unfinished / '80_mixture'})" in caplog.text
    assert curate(["export", "datasets", str(unfinished / "80_mixture"), "--output", str(out), "--scheduler", "synchronous",
                   "--phase", "midtrain_reasoning_32k"]) == 0
    shutil.rmtree(out)

    damaged = tmp_path / "damaged"
    shutil.copytree(run, damaged)
    m = manifest(damaged, "pretrain_phase2")
    shard = damaged / "80_mixture" / m["groups"][-1]["shards"][0]["path"]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the checksum can tell
    shard.write_bytes(bytes(data))
    assert curate(["export", "datasets", str(damaged), "--output", str(out), "--scheduler", "synchronous"]) == 4
    assert "sha256" in caplog.text and not out.exists() and not list(tmp_path.glob(".out*"))

    assert curate(["export", "megatron", str(run), "--output", str(out), "--phase", "no_such_phase"]) == 2
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert curate(["export", "megatron", str(run), "--output", str(foreign), "--phase", "midtrain_reasoning_32k",
                   "--scheduler", "synchronous"]) == 5
    assert (foreign / "notes.txt").read_text() == "mine"

    spaced = tmp_path / "with space" / "out"  # Megatron-LM splits a data-args file on whitespace
    assert curate(["export", "megatron", str(run), "--output", str(spaced), "--phase", "midtrain_reasoning_32k",
                   "--scheduler", "synchronous"]) == 2
    assert "has no spaces" in caplog.text and not spaced.parent.exists()


def test_an_export_replaces_only_its_own_earlier_export(run, tmp_path):
    out = tmp_path / "again"
    args = ["export", "megatron", str(run), "--output", str(out), "--phase", "midtrain_reasoning_32k", "--scheduler", "synchronous", "--quiet"]
    assert curate(args) == 0
    first = json.loads((out / "export.json").read_text())
    assert curate(args) == 0
    assert json.loads((out / "export.json").read_text()) == first
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "export.json", "midtrain_reasoning_32k", "midtrain_reasoning_32k.data-args", "tokenizer"]
    # a best-fit phase's prefixes without weights: Megatron takes each file once, blended by its size
    listed = (out / "midtrain_reasoning_32k.data-args").read_text().split()
    assert listed and all(Path(x).is_absolute() and Path(x + ".bin").is_file() for x in listed)


def test_stats_mixture_shows_each_phase_planned_against_replayed(run, capsys):
    assert curate(["stats", str(run), "--mixture"]) == 0
    out = capsys.readouterr().out
    for phase in [*PRETRAIN, *MIDTRAIN]:
        b = manifest(run, phase)["budget"]
        assert f"{phase} (" in out and f"planned {b['planned_tokens']:,}, replayed {b['replay_tokens']:,}" in out
    g = manifest(run, "pretrain_phase1")["groups"][0]
    line = next(ln for ln in out.splitlines() if ln.strip().startswith(g["name"] + " "))
    assert f"{g['planned_tokens']:,}" in line and f"{g['replay_tokens']:,}" in line


def test_an_export_of_a_small_run_takes_one_process_and_writes_what_a_cluster_writes(run, megatron_export, tmp_path, capsys):
    """Without --workers or --scheduler, shards under cluster.min_input_mb are exported in one
    process (and it says so); the files are those of the 2-worker export, byte for byte."""
    out = tmp_path / "export"
    assert curate(["export", "megatron", str(run), "--output", str(out)]) == 0
    assert "curate export: one process (inputs " in capsys.readouterr().out
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.suffix in (".bin", ".idx", ".data-args"))
    assert len(files) >= 10
    assert files == sorted(p.relative_to(megatron_export) for p in megatron_export.rglob("*") if p.is_file() and p.suffix in (".bin", ".idx", ".data-args"))
    for f in files:  # a blend names its datasets by path: the same but for the export folder
        assert (out / f).read_bytes().replace(bytes(out), bytes(megatron_export)) == (megatron_export / f).read_bytes(), f


def test_a_phase_with_no_data_gets_no_blend_megatron_cannot_build(run, tmp_path, caplog, capsys):
    """A phase whose mix finds no document (here: books alone, which the sample lacks; the mix is merged by kind, so reasoning is set to null) replays nothing;
    an empty .data-args would fail in Megatron's blend builder, so the export writes none and says why."""
    alone = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(alone), "--scheduler", "synchronous", "--quiet",
                   "--profile", "cpu", "mixture.phases.midtrain_reasoning_32k.mix={books: 1.0, reasoning: null}"]) == 0
    m = json.loads((alone / "manifests" / "midtrain_reasoning_32k.json").read_text())
    assert m["budget"]["replay_tokens"] == 0 and [s["reason"] for s in m["shortfalls"]] == ["no_data"]
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", "midtrain_reasoning_32k",
                   "--phase", "midtrain_repo_code_32k", "--quiet"]) == 0
    assert "midtrain_repo_code_32k; left out: midtrain_reasoning_32k (replays no token) (megatron)" in capsys.readouterr().out
    p = json.loads((out / "export.json").read_text())["phases"]
    assert p["midtrain_reasoning_32k"]["data_args"] is None and p["midtrain_reasoning_32k"]["megatron_flags"] == []
    assert not (out / "midtrain_reasoning_32k.data-args").exists() and "there is nothing to train on" in caplog.text
    assert (out / p["midtrain_repo_code_32k"]["data_args"]).read_text().split()  # the other phase is whole
    # the datasets export writes the empty phase as a dataset of no rows, and says so
    import datasets

    capsys.readouterr()
    caplog.clear()
    hf = tmp_path / "datasets"
    assert curate(["export", "datasets", str(alone), "--output", str(hf), "--phase", "midtrain_reasoning_32k", "--quiet"]) == 4
    assert "no phase exported has anything to train on" in caplog.text and not hf.exists()  # alone: nothing to train on
    assert curate(["export", "datasets", str(alone), "--output", str(hf), "--phase", "midtrain_reasoning_32k",
                   "--phase", "midtrain_repo_code_32k", "--quiet"]) == 0
    assert "a dataset of no rows: midtrain_reasoning_32k (replays no token)" in capsys.readouterr().out
    assert "there is nothing to train on" in caplog.text
    assert json.loads((hf / "export.json").read_text())["phases"]["midtrain_reasoning_32k"]["empty"]
    assert len(datasets.load_from_disk(str(hf / "midtrain_reasoning_32k"))) == 0


def test_a_run_on_a_read_only_mount_is_exported_without_its_lock(run, tmp_path, monkeypatch):
    """A finished run on a read-only file system: the lock file cannot be written there (exit 7 with
    advice about --output, which was writable); such a run is read without it."""
    import errno

    import pipelines.exports.common as common

    def read_only(folder, *a, **k):
        raise PermissionError(errno.EROFS, "Read-only file system", str(folder / ".curate.lock"))

    monkeypatch.setattr(common, "folder_lock", read_only)
    real_access = common.os.access
    monkeypatch.setattr(common.os, "access", lambda p, mode: False if Path(p) == run and mode == os.W_OK else real_access(p, mode))
    out = tmp_path / "ro"
    assert curate(["export", "megatron", str(run), "--output", str(out), "--phase", "midtrain_reasoning_32k", "--scheduler",
                   "synchronous", "--quiet"]) == 0
    assert (out / "export.json").is_file()


def test_a_document_its_tokenizer_counts_otherwise_ends_in_exit_4_not_an_internal_error():
    """A tokenizer.json changed since the run counts a shard's documents otherwise: the export
    stops at the first one (``check_counts``), a damaged input, not a bug of curate (exit 70)."""
    from curation.export.sequences import TokenCountError, check_counts
    from pipelines.exit_codes import failure

    with pytest.raises(TokenCountError) as err:
        check_counts([np.arange(5)], [4], ["doc-1"], "shards/p/web/high/part-00000.parquet")
    code, message = failure(err.value)
    assert code == 4 and "document doc-1 has 5 tokens with this tokenizer, its shard records 4" in message


def test_empty_phases_say_their_true_reason_and_no_phase_asks_megatron_for_0_samples(run, tmp_path):
    """A phase that plans a fraction of one copy replayed nothing, and the exports said "its
    manifest's shortfalls say why" where it has none; a phase of fewer tokens than one sequence was
    exported with --train-samples 0, a blend of length 0 (a trainer trained on nothing)."""
    alone = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(alone), "--scheduler", "synchronous", "--quiet",
                   "--profile", "cpu", "mixture.phases.midtrain_long_context_128k.budget={tokens: 100}",
                   "mixture.phases.pretrain_phase2.budget={tokens: 700}"]) == 0
    m = json.loads((alone / "manifests" / "midtrain_long_context_128k.json").read_text())
    assert m["budget"]["planned_tokens"] > 0 and m["budget"]["replay_tokens"] == 0 and m["shortfalls"] == []
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", "midtrain_long_context_128k",
                   "--phase", "pretrain_phase2", "--phase", "midtrain_repo_code_32k", "--quiet"]) == 0  # one with samples: written
    p = json.loads((out / "export.json").read_text())["phases"]
    assert "less than one whole copy of its documents gives" in p["midtrain_long_context_128k"]["empty"]
    small = p["pretrain_phase2"]
    assert 0 < small["replay_tokens"] < 4096 and small["data_args"] is None and small["megatron_flags"] == []
    assert "fewer than one 4,096-token sample: Megatron can draw none" in small["empty"]
    assert not (out / "pretrain_phase2.data-args").exists() and not (out / "pretrain_phase2").exists()


def test_an_empty_phase_with_shortfalls_says_them():
    """A phase whose mix found no document was said as "its manifest's shortfalls say why": the export
    pointed at the manifest instead of saying the reason it holds."""
    from pipelines.exports.common import empty_reason

    m = {"budget": {"planned_tokens": 0}, "shortfalls": [{"group": None, "reason": "no_data", "tokens": 133337}]}
    assert empty_reason(m) == "no document of its mix reached the mixture (the manifest's shortfalls)"
    m["shortfalls"] += [{"group": "web/high", "reason": "epoch_cap", "tokens": 5}, {"group": "web/low", "reason": "epoch_cap", "tokens": 1}]
    assert empty_reason(m) == ("no document of its mix reached the mixture; its groups are held at their epoch caps "
                               "(the manifest's shortfalls)")
