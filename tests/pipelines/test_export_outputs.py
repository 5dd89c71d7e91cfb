"""`curate export` as a trainer reads its folder: an earlier export's phases are kept or refused, never
deleted without a word; a phase left out says why and leaves no file; a non-special --eod-token is refused
up front; every file is one a blend reads; whole samples that leave much of a phase undrawn are said."""

import json
import logging
import re
from pathlib import Path

import pytest

from pipelines.cli import main as curate
from pipelines.marker import check_files, read_marker
from tests.pipelines.test_export_megatron_surplus import build_with_listed_flags

QUIET = ["--scheduler", "synchronous", "--quiet"]


def mixture(run: Path, out: Path, *overrides: str) -> Path:
    assert curate(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(out), *QUIET, "--profile", "cpu", *overrides]) == 0
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def listed_prefixes(export: Path) -> set[str]:
    phases = json.loads((export / "export.json").read_text())["phases"]
    return {x for p in phases.values() for g in p["groups"].values() for x in g["prefixes"]}


def test_exporting_a_phase_into_an_earlier_export_keeps_its_other_phases(finished_run, tmp_path, caplog, capsys):
    """`--phase X` into a folder holding the run's other phases deleted them without a word; a datasets
    export replaced a megatron one silently. Now: the same export keeps them, another is refused."""
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--phase", "pretrain_phase2",
                   "--phase", "midtrain_reasoning_32k", *QUIET]) == 0
    before = snapshot(out)
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--phase", "midtrain_repo_code_32k", *QUIET]) == 0
    assert "kept from the earlier export: midtrain_reasoning_32k, pretrain_phase2" in capsys.readouterr().out
    after = snapshot(out)
    assert {k: v for k, v in after.items() if k in before and k not in ("export.json", "_SUCCESS")} == \
        {k: v for k, v in before.items() if k not in ("export.json", "_SUCCESS")}  # the kept phases' files, byte for byte
    exp = json.loads((out / "export.json").read_text())
    assert list(exp["phases"]) == ["midtrain_reasoning_32k", "midtrain_repo_code_32k", "pretrain_phase2"]
    assert exp["phases"]["pretrain_phase2"] == json.loads(before["export.json"])["phases"]["pretrain_phase2"]
    marker = read_marker(out)
    assert marker["phases"] == list(exp["phases"]) and check_files(out, marker) == []
    # every phase, kept ones included, builds in megatron-core with the flags export.json lists
    report = build_with_listed_flags(out, tmp_path / "cache")
    assert set(report) == set(exp["phases"]) and all("error" not in r and sum(r["drawn"].values()) for r in report.values())

    # another format, or this format with another --eod-token, would remove phases: refused, nothing changed
    kept = snapshot(out)
    assert curate(["export", "datasets", str(finished_run), "--output", str(out), "--phase", "midtrain_repo_code_32k", *QUIET]) == 5
    assert "holds a megatron export of midtrain_reasoning_32k, midtrain_repo_code_32k, pretrain_phase2" in caplog.text
    assert "--replace" in caplog.text and snapshot(out) == kept
    caplog.clear()
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--phase", "midtrain_repo_code_32k",
                   "--eod-token", "<|im_end|>", *QUIET]) == 5
    assert "written with --eod-token '<|endoftext|>'" in caplog.text and snapshot(out) == kept
    # --replace replaces it whole and says which phases go
    caplog.clear()
    assert curate(["export", "datasets", str(finished_run), "--output", str(out), "--phase", "midtrain_reasoning_32k", "--replace", *QUIET]) == 0
    assert "its phases midtrain_repo_code_32k, pretrain_phase2 are removed" in caplog.text
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "export.json", "midtrain_reasoning_32k"]


def test_a_datasets_export_phase_by_phase_loads_every_phase(finished_run, tmp_path):
    import datasets

    out = tmp_path / "datasets"
    for phase in ("pretrain_phase2", "midtrain_repo_code_32k"):
        assert curate(["export", "datasets", str(finished_run), "--output", str(out), "--phase", phase, *QUIET]) == 0
    phases = json.loads((out / "export.json").read_text())["phases"]
    assert list(phases) == ["midtrain_repo_code_32k", "pretrain_phase2"]
    assert all(len(datasets.load_from_disk(str(out / p))) == phases[p]["rows"] > 0 for p in phases)


def test_a_phase_of_less_than_one_sample_says_so_and_leaves_no_file(finished_run, tmp_path, caplog, capsys):
    """A tiny phase budget: the summary said "no data" of a phase that replays tokens, exited 0 with nothing
    trainable, and left .bin/.idx files that export.json did not reference."""
    alone = mixture(finished_run, tmp_path / "mixture", "mixture.phases.pretrain_phase1.budget={tokens: 1000}")
    replayed = json.loads((alone / "manifests" / "pretrain_phase1.json").read_text())["budget"]["replay_tokens"]
    assert 0 < replayed < 4096
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", "pretrain_phase1", *QUIET]) == 4
    assert "no phase exported has anything to train on" in caplog.text
    assert f"replays {replayed:,} tokens, fewer than one 4,096-token sample" in caplog.text
    assert not out.exists() and not list(tmp_path.glob(".megatron*"))
    # beside a phase with samples: exported, the small one left out with its reason, none of its files kept
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", "pretrain_phase1", "--phase",
                   "midtrain_repo_code_32k", *QUIET]) == 0
    assert f"left out: pretrain_phase1 ({replayed:,} tokens, fewer than one 4,096-token sample)" in capsys.readouterr().out
    p = json.loads((out / "export.json").read_text())["phases"]["pretrain_phase1"]
    assert p["data_args"] is None and all(g["prefixes"] == [] for g in p["groups"].values())
    assert not (out / "pretrain_phase1").exists()
    assert {str(b.relative_to(out).with_suffix("")) for b in out.rglob("*.bin")} == listed_prefixes(out)
    # the datasets export keeps its rows: trainable, exit 0
    assert curate(["export", "datasets", str(alone), "--output", str(tmp_path / "ds"), "--phase", "pretrain_phase1", *QUIET]) == 0


def test_an_ordinary_eod_token_is_refused_before_anything_is_read(finished_run, tmp_path, caplog):
    out = tmp_path / "eod"
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), "--eod-token", "hello", *QUIET]) == 2
    assert "--eod-token 'hello' is not a special token of tokenizer 'qwen'" in caplog.text
    assert "<|endoftext|>, <|im_start|>, <|im_end|>" in caplog.text and "<|fim_prefix|>" not in caplog.text
    assert not out.exists()


def test_every_folder_of_a_megatron_export_holds_a_file_a_blend_reads(finished_run, tmp_path):
    """The sample's long_docs/all replays nothing: an empty folder was left for it. A best-fit phase's
    `tokens` are its documents with their EODs; its files hold the padded bins and one EOD each."""
    from curation.export.megatron_index import read_index

    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(finished_run), "--output", str(out), *QUIET]) == 0
    assert [d for d in out.rglob("*") if d.is_dir() and not any(d.iterdir())] == []
    assert {str(b.relative_to(out).with_suffix("")) for b in out.rglob("*.bin")} == listed_prefixes(out)
    for phase, p in json.loads((out / "export.json").read_text())["phases"].items():
        assert not p.get("warnings"), phase  # the sample's own sequence lengths: every group drawn, < 5 % left out
        files = [x for g in p["groups"].values() for x in g["prefixes"]]
        held = sum(int(read_index(out / x)["lengths"].sum()) for x in files)
        if p["packing"] == "best_fit" and files:
            assert held == p["train_samples"] * p["seq_length"] + len(files) > p["tokens"], phase
        elif files:
            assert held == p["tokens"], phase


def test_long_sequences_warn_what_whole_samples_leave_undrawn(finished_run, tmp_path, caplog):
    """At seq_length 131,072 phase 2's planned tokens gave --train-samples 1 silently: a third of the
    plan never drawn, and every group but one without a sample. The groups megatron-core's blend, built
    with the listed flags, would draw nothing from are left out of it, named in one line."""
    caplog.set_level(logging.INFO, logger="curate.export")
    alone = mixture(finished_run, tmp_path / "mixture", "mixture.phases.pretrain_phase2.seq_length=131072",
                    "mixture.phases.pretrain_phase1.seq_length=32768")
    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(alone), "--output", str(out), "--phase", "pretrain_phase1", "--phase", "pretrain_phase2",
                   *QUIET]) == 0
    phases = json.loads((out / "export.json").read_text())["phases"]
    m = json.loads((alone / "manifests" / "pretrain_phase2.json").read_text())
    with_eod = sum(g["planned_tokens"] * (1 + g["unique_documents"] / g["unique_tokens"]) for g in m["groups"] if g["unique_tokens"])
    p2 = phases["pretrain_phase2"]
    undrawn = 1 - p2["train_samples"] * 131072 / with_eod
    said = re.search(r"so (\d+)% of the plan is never drawn", p2["warnings"][0])
    assert undrawn > 0.05 and said and int(said[1]) == pytest.approx(100 * undrawn, abs=1)
    assert f"--train-samples {p2['train_samples']:,} of 131,072 tokens" in caplog.text
    report = build_with_listed_flags(out, tmp_path / "cache")
    for phase, p in phases.items():
        drawn = report[phase]["drawn"]
        weighted = {g for g, v in p["groups"].items() if v["weight"] > 0}
        left = {g for g, v in p["groups"].items() if v.get("left_out")}
        assert left and weighted == set(drawn), phase  # few samples over many groups: those drawn none from are left out
        said = sorted({r.getMessage() for r in caplog.records if r.getMessage().startswith(f"{phase}: left out of the blend")})
        assert len(said) == 1 and all(f" {g} (" in said[0] for g in left) and not any(f" {g} (" in said[0] for g in drawn), phase


def test_draw_warnings_give_the_figures():
    from pipelines.exports.megatron import draw_warnings

    assert draw_warnings("p", {"a": 0.99, "b": 0.01}, {"a": "web/high", "b": "code/high"}, 1000.0 * 4096, 1000, 4096) == []
    said = draw_warnings("p", {"a": 0.99, "b": 0.01}, {"a": "web/high", "b": "code/high"}, 1.9 * 4096, 1, 4096)
    assert "so 47% of the plan is never drawn" in said[0] and "draws none from code/high (weight 0.01)" in said[1]
