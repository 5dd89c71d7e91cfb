"""``--dry-run`` into an existing run says what the same command would do with each stage's folder:
skipped (up to date), made again and why, and, for one stage given alone into a run's folder, the
run's later stages it would leave stale; nothing is written."""

from __future__ import annotations

import json

import pytest

from pipelines.cli import main

OFF = [
    "semdedup.enabled=false",
    "edu_score.enabled=false",
    "code_web.enabled=false",
    "forge_filter.enabled=false",
    "mixture.enabled=false",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("dry") / "run"
    assert (
        main(
            [
                "run",
                "pipelines/configs/glm45.yaml",
                "--input",
                "sample_data/web",
                "--output",
                str(out),
                "--quiet",
                "--scheduler",
                "synchronous",
                *OFF,
            ]
        )
        == 0
    )
    return out


def _plan(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return {p["stage"]: p["status"] for p in json.loads(capsys.readouterr().out)["plan"]}


def _files(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_a_dry_run_of_the_same_command_says_every_stage_is_up_to_date(run_dir, capsys):
    before = _files(run_dir)
    status = _plan(
        capsys,
        [
            "run",
            "pipelines/configs/glm45.yaml",
            "--input",
            "sample_data/web",
            "--output",
            str(run_dir),
            "--dry-run",
            *OFF,
        ],
    )
    assert set(status.values()) == {"up to date: skipped"}, status
    assert _files(run_dir) == before  # nothing written, the ingest memo of checksums included


def test_a_changed_key_names_the_stage_its_values_and_the_stages_after_it(run_dir, capsys):
    status = _plan(
        capsys,
        [
            "run",
            "pipelines/configs/glm45.yaml",
            "--input",
            "sample_data/web",
            "--output",
            str(run_dir),
            "--dry-run",
            *OFF,
            "web_quality.combine=max",
        ],
    )
    assert status["ingest"] == status["minhash_dedup"] == "up to date: skipped"
    assert status["web_quality"] == 'runs again: its config changed (combine "mean" → "max")'
    assert status["code_quality"] == (
        "runs again: the stage before it runs, so its input changes (unless the output of "
        "web_quality comes out as before: then it is reused)"
    )


def test_one_stage_into_a_run_folder_names_what_it_leaves_stale_and_a_new_folder_is_made(run_dir, tmp_path, capsys):
    argv = ["code-quality", "--input", str(run_dir / "40_web_quality"), "--dry-run"]
    status = _plan(capsys, [*argv, "--output", str(run_dir / "50_code_quality"), "tier_high=85"])
    assert status["code_quality"].startswith("runs again: its config changed (tier_high 80.0 → 85.0)")
    status = _plan(capsys, [*argv, "--output", str(tmp_path / "code_quality"), "tier_high=85"])
    assert status["code_quality"] == "runs: no output there yet"
    status = _plan(
        capsys,
        [
            "web-quality",
            "--input",
            str(run_dir / "20_minhash_dedup"),
            "--output",
            str(run_dir / "40_web_quality"),
            "--dry-run",
            "combine=max",
        ],
    )
    assert status["web_quality"].endswith(
        "then the run's later stages 50_code_quality are stale (made from its previous output)"
    )


def test_one_stage_into_a_run_folder_leaves_out_the_later_stages_stale_before_it(run_dir, tmp_path, capsys):
    """Later stages stale already (web_quality made alone with other settings, and code_quality after
    it): the stage before them, given alone, does not name them among those it would leave stale."""
    import shutil

    from curation.stats.run_state import run_state

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    assert (
        main(
            [
                "web-quality",
                "--input",
                str(run / "20_minhash_dedup"),
                "--output",
                str(run / "40_web_quality"),
                "--quiet",
                "--scheduler",
                "synchronous",
                "combine=max",
            ]
        )
        == 0
    )
    assert set(run_state(run).stale) == {"40_web_quality", "50_code_quality"}
    status = _plan(
        capsys,
        [
            "minhash-dedup",
            "--input",
            str(run / "10_exact_dedup"),
            "--output",
            str(run / "20_minhash_dedup"),
            "--dry-run",
            "threshold=0.9",
        ],
    )
    assert (
        status["minhash_dedup"].startswith("runs again: its config changed")
        and "later stages" not in status["minhash_dedup"]
    )


def test_a_dry_run_into_a_new_folder_reads_no_input_file(tmp_path, capsys, monkeypatch):
    """There is nothing to compare a fingerprint with, so no file is checksummed (a dry run of a 1 TB
    corpus would otherwise read all of it)."""
    import pipelines.marker

    def no_read(path):
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(pipelines.marker, "checksum", no_read)
    status = _plan(
        capsys,
        [
            "run",
            "pipelines/configs/glm45.yaml",
            "--input",
            "sample_data/web",
            "--output",
            str(tmp_path / "new"),
            "--dry-run",
            *OFF,
        ],
    )
    assert set(status.values()) == {"runs: no output there yet"}


def test_a_stage_folder_without_its_success_is_refused_as_the_real_run_refuses_it(run_dir, tmp_path, capsys, caplog):
    """The dry run reports the real run's refusal (exit 5) and its `rm -r` fix; the stages after it go
    as they would once the folder is gone, the second one reused where the first comes out as before."""
    import shutil

    from pipelines.safety import OutputError, check_replaceable

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    (run / "20_minhash_dedup" / "_SUCCESS").unlink()
    argv = ["run", "pipelines/configs/glm45.yaml", "--input", "sample_data/web", "--output", str(run), *OFF]
    status = _plan(capsys, [*argv, "--dry-run"])
    with pytest.raises(OutputError) as refused:
        check_replaceable(run / "20_minhash_dedup", ("minhash_dedup",))
    assert status["minhash_dedup"] == f"refused: a real run stops before it changes anything (exit 5): {refused.value}"
    assert f"rm -r {run / '20_minhash_dedup'}" in status["minhash_dedup"]
    assert status["web_quality"] == "runs again: the stage before it runs, so its input changes"
    assert status["code_quality"] == (
        "runs again: the stage before it runs, so its input changes (unless the output of "
        "web_quality comes out as before: then it is reused)"
    )
    assert main([*argv, "--quiet", "--scheduler", "synchronous"]) == 5
    assert str(refused.value) in caplog.text
