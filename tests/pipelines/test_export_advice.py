"""What `curate export` says where a run, a folder or an output is not what it expects, and the figures
that tell a trainer why the blend's languages differ from the manifest's (on a finished run of the sample,
tests/pipelines/conftest.py, copied where a test changes it)."""

import json
import re
import shutil
import unicodedata
from pathlib import Path

from pipelines.cli import main as curate

ONE = ["--scheduler", "synchronous", "--quiet"]
DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def test_a_deleted_stage_folder_is_named_and_the_refusal_offers_the_mixture_folder(finished_run, tmp_path, caplog):
    """A stage folder before the mixture removed: the refusal offered only a re-run of the stages from
    it on, and the mixture folder exported with "a stage before it was made again since"."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run, symlinks=True)
    shutil.rmtree(run / "70_edu_score")
    caplog.clear()
    assert curate(["export", "megatron", str(run), "--output", str(tmp_path / "refused"), *ONE]) == 4
    assert "70_edu_score is listed in run.json but missing" in caplog.text
    assert f"`curate export FORMAT {run / '80_mixture'}`" in caplog.text and not (tmp_path / "refused").exists()
    caplog.clear()
    assert (
        curate(
            [
                "export",
                "megatron",
                str(run / "80_mixture"),
                "--output",
                str(tmp_path / "mix"),
                "--phase",
                "midtrain_reasoning_32k",
                *ONE,
            ]
        )
        == 0
    )
    lines = [r.getMessage() for r in caplog.records if "is not the current output" in r.getMessage()]
    assert lines and "70_edu_score is listed in run.json but missing" in lines[0]
    assert "made again since" not in caplog.text


def test_a_folder_inside_a_run_names_the_folder_to_export(finished_run, tmp_path, caplog):
    caplog.clear()
    assert (
        curate(
            ["export", "megatron", str(finished_run / "80_mixture" / "shards"), "--output", str(tmp_path / "e"), *ONE]
        )
        == 4
    )
    assert f"give {finished_run / '80_mixture'}" in caplog.text and "finish it by running" not in caplog.text
    caplog.clear()
    assert (
        curate(
            ["export", "datasets", str(finished_run / "70_edu_score" / "docs"), "--output", str(tmp_path / "e"), *ONE]
        )
        == 4
    )
    assert f"inside {finished_run / '70_edu_score'}, not a run" in caplog.text and f"give {finished_run}" in caplog.text
    assert not (tmp_path / "e").exists()


def test_megatrons_cache_in_an_export_is_named_with_its_flag_and_replace_says_what_it_replaces(
    finished_run, tmp_path, caplog
):
    out = tmp_path / "export"
    args = ["export", "megatron", str(finished_run), "--output", str(out), "--phase", "midtrain_reasoning_32k", *ONE]
    assert curate(args) == 0
    cache = out / "cache" / "GPTDataset_indices" / "x.npy"  # what a training run without --data-cache-path writes
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"indices")
    for extra in ([], ["--replace"]):
        caplog.clear()
        assert curate([*args, *extra]) == 5
        assert "--data-cache-path" in caplog.text and "replaces only the files curate wrote" in caplog.text
    assert cache.read_bytes() == b"indices" and (out / "export.json").is_file()


def test_an_export_of_phases_with_no_data_is_refused_before_the_tokenizer_is_loaded(finished_run, tmp_path, caplog):
    """The phase's manifest says it replays no token: refused at once (it loaded the tokenizer and
    started the export first, ~14 s; here an --eod-token the tokenizer would refuse, exit 2, is not reached)."""
    alone = tmp_path / "mixture"
    assert (
        curate(
            [
                "mixture",
                "--input",
                str(finished_run / "75_forge_filter"),
                "--output",
                str(alone),
                *ONE,
                "--profile",
                "cpu",
                "mixture.phases.midtrain_reasoning_32k.mix={books: 1.0, reasoning: null}",
            ]
        )
        == 0
    )
    caplog.clear()
    assert (
        curate(
            [
                "export",
                "datasets",
                str(alone),
                "--output",
                str(tmp_path / "e"),
                "--phase",
                "midtrain_reasoning_32k",
                "--eod-token",
                "hello",
                *ONE,
            ]
        )
        == 4
    )
    assert "no phase exported has anything to train on" in caplog.text and "no document of its mix" in caplog.text
    assert not (tmp_path / "e").exists()


def test_megatron_languages_say_what_fim_and_left_out_groups_change(finished_run, tmp_path):
    """The manifest plans a FIM'd group on its documents' own text; the blend's figure counts the FIM'd
    ids the files hold. export.json said the two figures per language with nothing between them."""
    out = tmp_path / "export"
    assert (
        curate(["export", "megatron", str(finished_run), "--output", str(out), "--phase", "pretrain_phase1", *ONE]) == 0
    )
    langs = json.loads((out / "export.json").read_text())["phases"]["pretrain_phase1"]["languages"]
    assert langs["und"]["fim_tokens"] > 0  # the sample's FIM'd code
    said = re.search(
        r"the sample's\s+phase 1: `und` ([\d,]+) of ([\d,]+)\)", DOC.read_text()
    )  # docs/export.md's figures
    assert said and [int(x.replace(",", "")) for x in said.groups()] == [
        langs["und"]["fim_tokens"],
        langs["und"]["planned_tokens"],
    ]
    for lang, v in langs.items():
        explained = v["manifest_planned_tokens"] - v["left_out_tokens"] + v["fim_tokens"]
        assert abs(v["planned_tokens"] - explained) <= 2, (lang, v)


def test_docs_say_the_ids_are_of_the_texts_nfc_form_as_the_tokenizer_gives_them():
    """Qwen's tokenizer.json normalises to NFC: the ids of U+2329 decode to U+3008. docs/export.md said nothing."""
    from curation.tokens import encode, load_tokenizer

    doc = DOC.read_text()
    assert (
        "**Ids are of the text's NFC form.**" in doc
        and "`\u2329`\n(U+2329) reaches the trainer as `\u3008` (U+3008)" in doc
    )
    text = "\u2329x\u232a e\u0301"
    decoded = load_tokenizer("qwen").decode(encode([text], "qwen")[0].tolist())
    assert decoded != text and decoded == unicodedata.normalize("NFC", text)
