"""`curate export megatron`: every phase's blend builds in megatron-core with exactly the flags export.json lists.

megatron-core blends a weighted phase in ``Σ ceil(train_samples·w_i)`` draws but builds each prefix
for ``ceil(ceil(train_samples·w_i)·(1 + mid_level_dataset_surplus))`` samples; with many weights and
few samples its greedy index can ask a prefix for more than that (an IndexError at the start of
training), so the export lists ``--mid-level-dataset-surplus`` where the default 0.005 is too small."""

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli import main as curate
from pipelines.exports.megatron import MEGATRON_SURPLUS, SIMULATE_MAX, blend_draws, blend_surplus
from tests.pipelines.test_export import REPO

# builds every phase of an export as a trainer given its megatron_flags would; where the flags raise the
# surplus, also at megatron's default, to show that the default does not build
FLAGS_LOADER = r'''
import json, os, socket, sys, warnings
warnings.filterwarnings("ignore")
import torch.distributed as dist
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
from megatron.core.datasets.utils import get_blend_from_list
out, cache = sys.argv[1], sys.argv[2]
exp = json.load(open(os.path.join(out, "export.json")))
class Tokenizer:
    eod = exp["eod_id"]; pad = exp["pad_id"]; vocab_size = 151669; unique_identifiers = {"class": "test"}
def build(phase, flags, surplus):
    flag = lambda k: flags[flags.index(k) + 1]
    packed = "--eod-mask-loss" in flags
    n = int(flag("--train-samples"))
    cfg = GPTDatasetConfig(random_seed=1, sequence_length=int(flag("--seq-length")), split=flag("--split"), tokenizer=Tokenizer(),
                           blend=get_blend_from_list(open(flag("--data-args-path")).read().split()),
                           reset_position_ids=packed, reset_attention_mask=packed, eod_mask_loss=packed, create_attention_mask=False,
                           mid_level_dataset_surplus=surplus, path_to_cache=os.path.join(cache, phase, str(surplus)))
    train, _, _ = BlendedMegatronDatasetBuilder(GPTDataset, [n, 0, 0], lambda: True, cfg).build()
    drawn = {}
    for i in range(n):
        ds = train.datasets[int(train.dataset_index[i])] if hasattr(train, "datasets") else train
        group = "/".join(ds.dataset_path.split("/")[-3:-1])
        drawn[group] = drawn.get(group, 0) + 1
    return drawn
report = {}
for phase, p in exp["phases"].items():
    f = p["megatron_flags"]
    if not f:
        continue
    listed = float(f[f.index("--mid-level-dataset-surplus") + 1]) if "--mid-level-dataset-surplus" in f else None
    r = report[phase] = {"surplus": listed}
    try:
        r["drawn"] = build(phase, f, listed if listed is not None else 0.005)
    except Exception as e:
        r["error"] = f"{type(e).__name__}: {e}"
    if listed is not None:
        try:
            build(phase, f, 0.005)
            r["default"] = "built"
        except IndexError as e:
            r["default"] = f"IndexError: {e}"
json.dump(report, sys.stdout)
'''


def build_with_listed_flags(export: Path, cache: Path) -> dict:
    pytest.importorskip("megatron.core")
    proc = subprocess.run([sys.executable, "-c", FLAGS_LOADER, str(export), str(cache)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_phase_builds_in_megatron_with_the_flags_export_json_lists(finished_run, tmp_path):
    """Phase 1 planned at 426,000 tokens: 104 samples over 11 weighted prefixes. Megatron blends
    them in more draws than samples and, at its default surplus, builds a prefix for fewer samples
    than its index draws from it: an IndexError before training starts. The export lists the
    smallest surplus that builds, only there; every phase builds with its flags as listed, and
    draws each group within one sample of its weight."""
    alone = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(alone), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu", "mixture.phases.pretrain_phase1.budget={tokens: 426000}"]) == 0
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--quiet"]) == 0
    exp = json.loads((out / "export.json").read_text())
    report = build_with_listed_flags(out, tmp_path / "cache")
    assert set(report) == {ph for ph, p in exp["phases"].items() if p["megatron_flags"]} and len(report) >= 4
    for phase, r in report.items():
        p = exp["phases"][phase]
        assert "error" not in r, f"{phase}: {r.get('error')}"
        assert sum(r["drawn"].values()) == p["train_samples"] > 0
        if p["packing"] == "none":
            for g, v in p["groups"].items():  # each group's share: its weight, to within one sample
                assert abs(r["drawn"].get(g, 0) - v["weight"] * p["train_samples"]) <= 1, (phase, g, r["drawn"], v["weight"])
        else:
            assert r["surplus"] is None  # a best-fit phase's unweighted blend has no surplus to set
    raised = [ph for ph, r in report.items() if r["surplus"] is not None]
    assert raised == ["pretrain_phase1"]  # the other phases build at megatron's default: their flags are as before
    one = report["pretrain_phase1"]
    assert "oversamples the contributing datasets" in one["default"]  # megatron's default surplus does not build this phase
    assert MEGATRON_SURPLUS < one["surplus"] < 0.1
    flags = exp["phases"]["pretrain_phase1"]["megatron_flags"]
    assert flags[flags.index("--mid-level-dataset-surplus") + 1] == f"{one['surplus']:g}"


def test_blend_draws_replay_megatrons_blending_index_and_the_bound_holds():
    """blend_draws counts what megatron-core's build_blending_indices (helpers.cpp) draws, exactly;
    above SIMULATE_MAX it gives a bound no count exceeds."""
    np = pytest.importorskip("numpy")
    helpers = pytest.importorskip("megatron.core.datasets.helpers")
    rng = random.Random(7)
    for _ in range(60):
        k = rng.randint(1, 40)
        raw = [rng.random() ** 3 + 1e-4 for _ in range(k)]
        w = (np.asarray(raw) / np.sum(raw)).tolist()
        size = rng.randint(1, 600)
        index, sample = np.zeros(size, dtype=np.int16), np.zeros(size, dtype=np.int64)
        helpers.build_blending_indices(index, sample, np.asarray(w, dtype=np.float64), k, size, False)
        real = np.bincount(index, minlength=k).tolist()
        assert blend_draws(w, size) == real
        bound = [min(size, math.floor(x * max(size - 1, 1)) + 1) for x in w]
        assert all(c <= b for c, b in zip(real, bound, strict=True))
    w = [0.5, 0.3, 0.2]
    big = SIMULATE_MAX // 3 + 1  # the bound, not a replay
    assert blend_draws(w, big) == [math.floor(x * (big - 1) * (1 + 1e-12) + 1 + 1e-9) for x in w]


def test_blend_surplus_is_none_where_the_default_builds_and_the_smallest_step_otherwise():
    # one prefix, or few large ones: megatron's default surplus is enough
    assert blend_surplus([1.0], [10_000_000], 2_000, 4096) is None
    assert blend_surplus([0.6, 0.4], [10**9, 10**9], 100_000, 4096) is None
    # 27 weights, 55 samples: megatron blends 78 draws, 23 of them from the first prefix (asked for 17), and
    # each prefix holds one sample more than it is asked for, so whole epochs give no other slack
    w, n, seq = [0.3, 0.2, *[0.02] * 25], 55, 100
    tokens = [(math.ceil(n * x) + 1) * seq + 1 for x in w]
    s = blend_surplus(w, tokens, n, seq)
    assert s == 0.091  # the second prefix: asked 11, built 12 in one epoch, drawn 15; 13 takes two epochs (24), ceil(11 x 1.091) = 13
    assert blend_surplus(w, tokens, n, seq) == s  # deterministic
    draws = blend_draws([x / sum(w) for x in w], sum(math.ceil(n * x / sum(w)) for x in w))

    def builds(surplus: float) -> bool:
        for x, t, d in zip([x / sum(w) for x in w], tokens, draws, strict=True):
            asked = int(math.ceil(math.ceil(n * x) * (1 + surplus)))
            epochs = max(1, -(-(asked * seq + 1) // t))
            if (epochs * t - 1) // seq < d:
                return False
        return True

    assert builds(s) and not builds(round(s - 0.001, 6))  # the smallest multiple of 0.001 that builds
