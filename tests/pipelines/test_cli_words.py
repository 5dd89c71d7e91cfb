"""What `curate` tells a newcomer: its version, help texts without reST markup or options a command refuses,
and an empty recipe file answered with the minimal recipe the README recommends."""

from __future__ import annotations

import pytest

from pipelines.cli import main


def _help(capsys, *words: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*words, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_version_prints_the_package_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"curate {version('curation')}"


@pytest.mark.parametrize("words", [(), ("train-classifier",), ("export",), ("manifest",), ("stats",)])
def test_help_texts_show_no_rest_literals(capsys, words):
    out = _help(capsys, *words)
    assert "``" not in out
    if not words:
        assert "`curate export megatron|datasets RUN --output DIR`" in " ".join(out.split())


def test_stats_run_dir_is_described_and_source_is_offered_where_it_is_read(capsys):
    assert "run_dir     a run folder (curate run's --output)" in _help(capsys, "stats")
    assert "--source" in _help(capsys, "run") and "--source" in _help(capsys, "ingest")
    assert "--source" not in _help(capsys, "mixture")


def test_an_empty_recipe_file_suggests_the_minimal_recipe(tmp_path, caplog):
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("")
    assert main(["run", str(recipe), "--input", str(tmp_path), "--output", str(tmp_path / "out"), "--dry-run"]) == 2
    assert "is empty; write only what differs from" in caplog.text and "'name: my-recipe'" in caplog.text
    assert "copy" not in caplog.text
