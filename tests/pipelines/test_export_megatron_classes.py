"""`curate export megatron` replays each document's planned epochs, not its group's mean: a group whose
languages have different repeat factors (`mixture.language_repeat`) gets one prefix per replay class;
best-fit bins pad with a pad token megatron-core masks, so a 128K sample is built in well under a second;
a group the blend would never draw is left out of it with one line."""

import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main as curate
from tests.pipelines.test_export import megatron_draws
from tests.pipelines.test_export_outputs import QUIET, mixture
from tests.pipelines.test_export_trainer import megatron

PRETRAIN = ["pretrain_phase1", "pretrain_phase2"]

# every sample of a best-fit phase as megatron-core's GPTDataset builds it with the flags export.json lists:
# the EODs it loops over, the positions that keep their loss, and the seconds it took
SAMPLES = r"""
import json, os, socket, sys, time, warnings
warnings.filterwarnings("ignore")
import torch.distributed as dist
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
from megatron.core.datasets.utils import get_blend_from_list
from megatron.core.tokenizers.text.utils.build_tokenizer import build_tokenizer
import argparse
out, phase, cache = sys.argv[1:4]
exp = json.load(open(os.path.join(out, "export.json"))); p = exp["phases"][phase]; flags = p["megatron_flags"]
flag = lambda k: flags[flags.index(k) + 1]
tok = build_tokenizer(argparse.Namespace(tokenizer_type=flag("--tokenizer-type"), tokenizer_model=flag("--tokenizer-model"),
    vocab_file=None, merge_file=None, tokenizer_special_tokens=None, tokenizer_hf_use_fast=False, trust_remote_code=False,
    tokenizer_hf_include_special_tokens=False, tokenizer_metadata=None))
class Tokenizer:
    eod = tok.eod; pad = tok.pad; vocab_size = 151669; unique_identifiers = {"class": "test"}
cfg = GPTDatasetConfig(random_seed=1, sequence_length=p["seq_length"], split="100,0,0", tokenizer=Tokenizer(),
                       blend=get_blend_from_list(open(flag("--data-args-path")).read().split()),
                       reset_position_ids="--reset-position-ids" in flags, reset_attention_mask="--reset-attention-mask" in flags,
                       eod_mask_loss="--eod-mask-loss" in flags, create_attention_mask=False, path_to_cache=cache)
train, _, _ = BlendedMegatronDatasetBuilder(GPTDataset, [p["train_samples"], 0, 0], lambda: True, cfg).build()
rows = []
for i in range(p["train_samples"]):
    t = time.perf_counter(); smp = train[i]; took = time.perf_counter() - t
    rows.append({"eods": int((smp["tokens"] == tok.eod).sum()), "trained": int(smp["loss_mask"].sum()), "seconds": took,
                 "pad": tok.pad, "eod": tok.eod})
json.dump(rows, sys.stdout)
"""


@pytest.fixture(scope="module")
def zh_run(finished_run, tmp_path_factory):
    """The sample's mixture with Chinese pages at twice the repeat of the others in their groups."""
    return mixture(finished_run, tmp_path_factory.mktemp("zh") / "mixture", "mixture.language_repeat={zh: 2.0}")


@pytest.fixture(scope="module")
def zh_export(zh_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("zh_megatron") / "export"
    assert curate(["export", "megatron", str(zh_run), "--output", str(out), *QUIET]) == 0
    return out


def blend_language_tokens(mix: Path, export: Path, phase: str) -> dict[str, float]:
    """Each language's ids (with their EODs) that the phase's blend draws over its train_samples: per
    prefix, its weight × the samples' tokens × the language's share of the prefix's ids, the prefix's
    documents read back from its shard (a class prefix ``-r<factor>``: the shard's rows of that factor)."""
    p = json.loads((export / "export.json").read_text())["phases"][phase]
    n = p["train_samples"] * p["seq_length"]
    words = (export / p["data_args"]).read_text().split()
    out: dict[str, float] = {}
    for w, path in zip(words[::2], words[1::2], strict=True):
        m = re.fullmatch(r"(.*/part-\d{5})(?:-r([\d.]+))?", str(Path(path).relative_to(export)))
        t = pd.read_parquet(mix / "shards" / f"{m[1]}.parquet", columns=["lang", "n_tokens", "copy"])
        if m[2]:
            factor = np.where(t["lang"] == "zh", 2.0, 1.0)
            t = t[factor == float(m[2])]
        ids = t["n_tokens"] + 1
        for lang, x in ids.groupby(t["lang"].fillna("und")).sum().items():
            out[lang] = out.get(lang, 0.0) + float(w) * n * x / ids.sum()
    return out


@pytest.mark.parametrize("phase", PRETRAIN)
def test_megatron_blend_gives_each_language_its_planned_epochs(zh_run, zh_export, phase, tmp_path):
    """With language_repeat {zh: 2.0}, Chinese pages get about twice the epochs of the English ones in
    their groups; one prefix per shard drew both at the group's mean (the tester's real mix: 53,480 zh
    tokens drawn in phase 1 against 72,867 planned, the same as without the setting)."""
    m = json.loads((zh_run / "manifests" / f"{phase}.json").read_text())
    planned = {lang: v["planned_tokens"] for lang, v in m["languages"].items()}
    docs = {lang: v["documents"] for lang, v in m["languages"].items()}
    assert planned.get("zh", 0) > 1000
    drawn = blend_language_tokens(zh_run, zh_export, phase)
    # drawn ids hold one EOD per document copy: at most the documents × their epochs (≤ the cap, 4) more than planned
    for lang in ("zh", "en"):
        assert planned[lang] * 0.98 <= drawn[lang] <= planned[lang] * 1.02 + 4 * docs[lang] + 4096, (
            lang,
            drawn[lang],
            planned[lang],
        )
    p = json.loads((zh_export / "export.json").read_text())["phases"][phase]
    assert p["languages"]["zh"] == {
        "planned_tokens": pytest.approx(planned["zh"], rel=0.01),
        "manifest_planned_tokens": planned["zh"],
        "fim_tokens": 0,  # no FIM'd zh document
        "left_out_tokens": 0,
    }
    classes = [g for g in p["groups"].values() if any(x.endswith("-r2") for x in g["prefixes"])]
    assert classes and all(len(g["epochs"]) == len(g["prefixes"]) for g in classes)
    assert all(e <= 4.0 for g in p["groups"].values() for e in g.get("epochs", {}).values())  # the cap, per class
    # megatron-core builds the blend of class prefixes with the flags listed and draws train_samples
    assert sum(megatron_draws(zh_export, phase, tmp_path)["drawn"].values()) == p["train_samples"]


def test_best_fit_bins_pad_with_a_token_megatron_masks_and_build_fast(finished_run, tmp_path):
    """The 128K long-context phase of the sample is one bin of under 1,000 tokens: padded with EODs,
    megatron-core's reset loop ran over 130,000 of them (minutes a sample). Padded with the pad token,
    a sample holds one EOD per document and one more, and only documents' positions and the padding's
    last (its label the closing EOD) keep their loss."""
    out = tmp_path / "megatron"
    phase = "midtrain_long_context_128k"
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--phase", phase, *QUIET]) == 0
    exp = json.loads((out / "export.json").read_text())
    assert (exp["pad_token"], exp["pad_id"]) == ("<|vision_pad|>", 151654)
    assert json.loads((out / "tokenizer" / "tokenizer_config.json").read_text())["pad_token"] == "<|vision_pad|>"
    p = exp["phases"][phase]
    assert p["seq_length"] == 131072 and p["train_samples"] >= 1
    rows = megatron(SAMPLES, str(out), phase, str(tmp_path / "cache"))
    assert rows[0]["pad"] == 151654 and rows[0]["eod"] == exp["eod_id"]  # as megatron-core's tokenizer loads the copy
    m = json.loads((finished_run / "80_mixture" / "manifests" / f"{phase}.json").read_text())
    docs = sum(g["replay_documents"] for g in m["groups"])
    for r in rows:
        assert r["eods"] <= docs + 2  # its documents' EODs and the bin's last: not the padding
        assert r["seconds"] < 5
        assert r["trained"] < 2 * p["tokens"]


def test_a_pad_token_that_is_the_eod_or_not_special_is_refused(finished_run, tmp_path, caplog):
    out = tmp_path / "megatron"
    assert (
        curate(["export", "megatron", str(finished_run), "--output", str(out), "--pad-token", "<|endoftext|>", *QUIET])
        == 2
    )
    assert "--pad-token '<|endoftext|>' is the --eod-token" in caplog.text
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--pad-token", "hello", *QUIET]) == 2
    assert "--pad-token 'hello' is not a special token" in caplog.text and not out.exists()
    assert (
        curate(
            [
                "export",
                "megatron",
                str(finished_run),
                "--output",
                str(out),
                "--phase",
                "midtrain_reasoning_32k",
                "--pad-token",
                "<|image_pad|>",
                *QUIET,
            ]
        )
        == 0
    )
    assert json.loads((out / "export.json").read_text())["pad_id"] == 151655
    data = np.fromfile(next(out.rglob("*.bin")), dtype=np.int32)
    assert (data == 151655).sum() > 0 and (data == 151654).sum() == 0


def test_a_group_the_blend_would_never_draw_is_left_out_with_one_line(finished_run, tmp_path, caplog):
    """At seq_length 32,768 phase 1's samples draw nothing from some of its smallest groups: they get no
    prefix of a weight of a fraction of one sample and no warning, one line, and train_samples stay the plan's."""
    alone = mixture(finished_run, tmp_path / "mixture", "mixture.phases.pretrain_phase1.seq_length=32768")
    out = tmp_path / "megatron"
    with caplog.at_level(logging.INFO, logger="curate.export"):
        assert (
            curate(["export", "megatron", str(alone), "--output", str(out), "--phase", "pretrain_phase1", *QUIET]) == 0
        )
    p = json.loads((out / "export.json").read_text())["phases"]["pretrain_phase1"]
    left = {g for g, v in p["groups"].items() if v.get("left_out")}
    assert left and all(p["groups"][g]["prefixes"] == [] and p["groups"][g]["weight"] == 0 for g in left)
    said = [r.getMessage() for r in caplog.records if "left out of the blend" in r.getMessage()]
    assert len(said) == 1 and all(g in said[0] for g in left)
    assert not any("draws none from" in w for w in p.get("warnings", []))
    m = json.loads((alone / "manifests" / "pretrain_phase1.json").read_text())
    with_eod = sum(
        g["planned_tokens"] * (1 + g["unique_documents"] / g["unique_tokens"])
        for g in m["groups"]
        if g["unique_tokens"]
    )
    assert p["train_samples"] == pytest.approx(with_eod // 32768, abs=1)
    assert not any(out.joinpath("pretrain_phase1", g).exists() for g in left)
