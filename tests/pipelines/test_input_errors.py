"""An input ingest cannot read fails the command before a scheduler or cluster starts, and says what
ingest reads; files of other formats in an input folder are named."""

from __future__ import annotations

import logging

import pytest

import pipelines.cluster
from pipelines.cli import main
from pipelines.recipe import default_recipe_path


@pytest.fixture
def no_cluster(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a scheduler was opened for an input that cannot be read")

    monkeypatch.setattr(pipelines.cluster, "open_client", refuse)


def test_a_missing_input_fails_before_a_cluster_starts(tmp_path, caplog, no_cluster):
    rc = main(
        [
            "run",
            str(default_recipe_path()),
            "--input",
            str(tmp_path / "nope"),
            "--output",
            str(tmp_path / "run"),
            "--workers",
            "2",
        ]
    )
    assert rc == 4 and f"{tmp_path / 'nope'} does not exist" in caplog.text
    assert not (tmp_path / "run").exists()


def test_a_folder_of_other_formats_names_them_and_what_ingest_reads(tmp_path, caplog, no_cluster):
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("a.csv", "b.txt", "c.tsv", "d.xml"):
        (raw / name).write_text("x\n")
    rc = main(["ingest", "--input", str(raw), "--output", str(tmp_path / "out")])
    assert rc == 4
    assert (
        f"no input files found in {raw} (passed over, formats it does not read: {raw / 'a.csv'}, {raw / 'b.txt'}, {raw / 'c.tsv'} and 1 more)"
        in caplog.text
    )
    assert "ingest reads .jsonl/.json/.ndjson[.gz|.zst], .parquet" in caplog.text
    assert not (tmp_path / "out").exists()


def test_records_ingest_cannot_read_are_warned_about_with_the_fix(tmp_path, caplog):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.jsonl").write_text(
        '{"text": "no source here", "id": 1}\n{"content": "text under another name", "source": "web"}\n'
        '{"text": "a fine web page with words", "source": "web"}\n'
    )
    rc = main(["ingest", "--input", str(raw), "--output", str(tmp_path / "out"), "--quiet"])
    assert rc == 0
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(
        m.startswith("ingest: 2 of 3 records could not be read as documents (missing_text=1, unknown_source=1)")
        and "ingest.fields.text=<field>" in m
        and "give --source" in m
        and str(tmp_path / "out" / "ledger") in m
        for m in warned
    ), warned
    assert not any("kept none" in m for m in warned)  # one record was read
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.jsonl").write_text('{"content": "text under another name"}\n{"content": "and one more like it"}\n')
    caplog.clear()
    rc = main(
        [
            "ingest",
            "--input",
            str(other),
            "--output",
            str(tmp_path / "out2"),
            "--quiet",
            "--source",
            "web",
            "ingest.fields.text=content",
        ]
    )  # what the warning says to do
    assert rc == 0 and not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_source_that_is_not_one_is_refused_before_anything_runs(tmp_path, caplog, no_cluster):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "github.jsonl").write_text('{"text": "def f():\\n    return 1\\n"}\n')
    assert main(["ingest", "--input", str(raw), "--output", str(tmp_path / "out"), "--source", "github"]) == 2
    assert "ingest.source (--source) 'github' is not a source; choose from web, code," in caplog.text
    rc = main(
        [
            "run",
            str(default_recipe_path()),
            "--input",
            str(raw),
            "--output",
            str(tmp_path / "run"),
            'ingest.inputs=[{match: "*github*", source: gh}]',
        ]
    )
    assert rc == 2 and "ingest.inputs entry '*github*': source 'gh' is not a source" in caplog.text
    assert not (tmp_path / "out").exists() and not (tmp_path / "run").exists()


def test_a_memory_limit_too_small_for_a_worker_is_refused(tmp_path, capsys, no_cluster):
    """Under ~512 MB the embedded workers paused for ever on the sample (Dask pauses at 80 %)."""
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                str(default_recipe_path()),
                "--input",
                "sample_data",
                "--output",
                str(tmp_path / "run"),
                "--memory-limit",
                "512MB",
            ]
        )
    assert exit_info.value.code == 2
    assert "'512MB': a worker needs at least 640MiB" in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_workers_and_a_scheduler_together_are_refused(tmp_path, caplog, no_cluster):
    rc = main(
        [
            "run",
            str(default_recipe_path()),
            "--input",
            "sample_data",
            "--output",
            str(tmp_path / "run"),
            "--workers",
            "2",
            "--scheduler",
            "synchronous",
        ]
    )
    assert rc == 2 and "--workers 2 and --scheduler synchronous: choose one" in caplog.text


def test_the_recipes_cluster_workers_with_a_scheduler_is_said_unused(tmp_path, caplog, no_cluster):
    """cluster.workers=3 with --scheduler was dropped without a word (run.json said "chosen with --scheduler")."""
    rc = main(
        [
            "run",
            str(default_recipe_path()),
            "--input",
            "sample_data",
            "--output",
            str(tmp_path / "run"),
            "--scheduler",
            "synchronous",
            "--dry-run",
            "cluster.workers=3",
        ]
    )
    assert (
        rc == 0
        and "cluster.workers = 3 sizes the embedded cluster; --scheduler synchronous runs elsewhere, so it is not used"
        in caplog.text
    )


def test_libraries_chatty_at_info_are_held_to_warnings(tmp_path, caplog, no_cluster):
    """faiss logs each CPU build it tries to load at INFO (eight lines in the middle of a run)."""
    import logging

    caplog.set_level(logging.INFO)  # what a run without --quiet logs
    main(["ingest", "--input", str(tmp_path / "nope"), "--output", str(tmp_path / "out")])
    for name in ("faiss.loader", "distributed.nanny"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name


@pytest.mark.parametrize("value", ["lots", "100MB"])
def test_export_checks_its_memory_limit_as_run_does(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["export", "megatron", str(tmp_path), "--output", str(tmp_path / "out"), "--memory-limit", value])
    assert exc.value.code == 2 and f"argument --memory-limit: '{value}'" in capsys.readouterr().err


def test_options_a_command_would_ignore_are_refused(tmp_path, caplog, no_cluster):
    stage = ["exact-dedup", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    assert main([*stage, "--source", "web"]) == 2
    assert "--source web: only ingest reads it" in caplog.text
    (tmp_path / "raw.jsonl").write_text('{"text": "a page", "source": "web"}\n')
    run = ["run", str(default_recipe_path()), "--input", str(tmp_path / "raw.jsonl"), "--output", str(tmp_path / "run")]
    assert main([*run, "--scheduler", "synchronous", "--memory-limit", "4GB"]) == 2
    assert "--memory-limit 4GB and --scheduler synchronous" in caplog.text


def test_help_shows_overrides_and_a_bare_word_says_what_an_override_is(capsys):
    with pytest.raises(SystemExit):
        main(["exact-dedup", "--help"])
    out = capsys.readouterr().out
    assert "[key=value ...]" in out and "override any recipe key" in out
    with pytest.raises(SystemExit) as exc:
        main(["exact-dedup", "--input", "a", "--output", "b", "threshold"])
    assert exc.value.code == 2 and "a recipe override is key=value" in capsys.readouterr().err


def test_stats_shows_the_funnel_of_a_stage_run_alone(finished_run, capsys, caplog):
    assert main(["stats", str(finished_run / "10_exact_dedup")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("exact_dedup ") and "run.json" not in caplog.text


def test_export_refuses_truncation_with_megatron(tmp_path, caplog):
    assert main(["export", "megatron", str(tmp_path), "--output", str(tmp_path / "out"), "--truncation", "random"]) == 2
    assert "--truncation random cuts the rows of a datasets export" in caplog.text


def test_a_run_counted_in_words_says_how_to_get_token_ids():
    from curation.tokens import token_id

    with pytest.raises(
        ValueError,
        match=r"re-run the recipe with tokenizer=qwen or a tokenizer.json path \(ingest.tokenizer and mixture.tokenizer, one tokenizer\)",
    ):
        token_id("whitespace", "<|endoftext|>")


def test_trainers_say_their_default_judge_is_the_cpu_one(capsys, caplog):
    from pipelines.commands.judge_progress import warn_if_local

    judge = logging.getLogger("pipelines.commands.train_code_quality")
    warn_if_local({"backend": "openai", "model": "m"}, 5, judge)
    assert "near chance" not in caplog.text
    warn_if_local({"backend": "local"}, 2000, judge)
    assert "annotating 2000 texts with the local CPU judge" in caplog.text and "1.1 h to 5.6 h for these" in caplog.text
    for kind in ("code-quality", "web-embedding"):
        with pytest.raises(SystemExit):
            main(["train-classifier", kind, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert '(default: {"backend": "local"' in out and "(default 2000" in out, kind


def test_turning_off_the_stage_a_command_runs_is_refused(tmp_path, caplog, no_cluster):
    (tmp_path / "raw.jsonl").write_text('{"text": "a page", "source": "web"}\n')
    run = ["run", str(default_recipe_path()), "--input", str(tmp_path / "raw.jsonl"), "--output", str(tmp_path / "run")]
    assert main([*run, "ingest.enabled=false"]) == 2 and "ingest always runs" in caplog.text
    stage = ["exact-dedup", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    assert main([*stage, "enabled=false"]) == 2 and "runs the exact_dedup stage whatever enabled says" in caplog.text
    assert not (tmp_path / "run").exists() and not (tmp_path / "out").exists()


def test_a_map_empty_by_default_takes_new_keys_at_any_depth(tmp_path, capsys):
    """web_quality.scorer_options is empty by default: a scorer's options are new keys below it."""
    model = default_recipe_path().parents[2] / "classifiers" / "models" / "web_linear"
    (tmp_path / "raw.jsonl").write_text('{"text": "a page", "source": "web"}\n')
    rc = main(
        [
            "run",
            str(default_recipe_path()),
            "--input",
            str(tmp_path / "raw.jsonl"),
            "--output",
            str(tmp_path / "run"),
            "--dry-run",
            f"web_quality.scorer_options.linear.model={model}",
        ]
    )
    assert rc == 0 and f'"model": "{model}"' in capsys.readouterr().out


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="no /proc here")
@pytest.mark.parametrize("command", ["run", "exact-dedup"])
def test_an_output_on_a_file_system_that_takes_no_files_is_not_writable(tmp_path, caplog, command, finished_run):
    (tmp_path / "raw.jsonl").write_text('{"text": "a page", "source": "web"}\n')
    args = (
        ["run", str(default_recipe_path()), "--input", str(tmp_path / "raw.jsonl")]
        if command == "run"
        else ["exact-dedup", "--input", str(finished_run / "00_ingest")]
    )
    rc = main([*args, "--output", "/proc/curate-test-output", "--scheduler", "synchronous", "--quiet"])
    where = "/proc/curate-test-output" if command == "run" else "/proc/.curate-test-output.curate.lock"
    assert rc == 7 and f"cannot write {where}" in caplog.text  # not "input missing" (4)


def test_a_repeated_input_option_adds_its_paths(tmp_path):
    """``--input a --input b`` reads both (argparse kept the last one only: a silently smaller run)."""
    import pandas as pd

    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_text(
            f'{{"id": "{name}", "text": "document {name} text", "source": "web"}}\n'
        )
    assert (
        main(
            [
                "ingest",
                "--input",
                str(tmp_path / "a.jsonl"),
                "--input",
                str(tmp_path / "b.jsonl"),
                "--output",
                str(tmp_path / "out"),
                "--quiet",
            ]
        )
        == 0
    )
    docs = pd.concat([pd.read_parquet(p) for p in sorted((tmp_path / "out" / "docs").glob("*.parquet"))])
    assert sorted(docs["doc_id"]) == ["a", "b"]
