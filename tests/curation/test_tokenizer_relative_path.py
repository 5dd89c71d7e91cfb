"""A relative tokenizer path: the recipe records it absolute, and one that cannot be found says
against which folder it was resolved."""

import shutil

import pytest

from curation.tokens import load_tokenizer, qwen_tokenizer_path
from pipelines.recipe import absolute_model_paths, load_recipe


def test_a_relative_tokenizer_path_is_recorded_absolute(tmp_path, monkeypatch):
    (tmp_path / "tok").mkdir()
    shutil.copyfile(qwen_tokenizer_path(), tmp_path / "tok" / "tokenizer.json")
    monkeypatch.chdir(tmp_path)
    recipe = load_recipe(None, ["ingest.tokenizer=tok", "mixture.tokenizer=./tok", "code_web.reparse=true"])
    absolute_model_paths(recipe, ["ingest"])  # the mixture's too: a stage run alone reads ingest's
    assert recipe["stages"]["ingest"]["tokenizer"] == recipe["stages"]["mixture"]["tokenizer"] == str(tmp_path / "tok")
    typo = load_recipe(None, ["ingest.tokenizer=nope/tokenizer.json"])
    absolute_model_paths(typo, ["ingest"])
    assert typo["stages"]["ingest"]["tokenizer"] == "nope/tokenizer.json"  # left as typed, for the check to name


def test_a_relative_tokenizer_that_is_not_found_names_the_folder_it_was_resolved_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=f"does not exist in {tmp_path} \\(a relative path is resolved against the folder"):
        load_tokenizer("../w/tokdir")
    with pytest.raises(FileNotFoundError) as absolute:
        load_tokenizer(str(tmp_path / "missing.json"))
    assert "resolved against" not in str(absolute.value)
