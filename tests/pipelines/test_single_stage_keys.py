"""Keys given to a single-stage command: another stage's key was taken without a word (the command
does not read it), and a stage with a key of its own name could not be given its own prefix."""

import logging

import pipelines.recipe_schema as schema
from pipelines.recipe import load_recipe
from pipelines.recipe_schema import override_path


def test_another_stages_key_is_warned_about(caplog):
    caplog.set_level(logging.WARNING, logger="curate")
    recipe = load_recipe(None, ["exact_dedup.keep=longest"], stage="minhash_dedup")
    assert recipe["stages"]["exact_dedup"]["keep"] == "longest"
    assert ("override 'exact_dedup.keep=longest' sets a key of exact_dedup, but this command runs minhash_dedup only, "
            "which does not read it: run it with `curate exact-dedup` or `curate run`") in caplog.text
    caplog.clear()
    load_recipe(None, ["threshold=0.7", "minhash_dedup.num_perm=128"], stage="minhash_dedup")  # its own keys: no word
    load_recipe(None, ["ingest.tokenizer=qwen"], stage="mixture")  # read across: the two tokenizers must agree
    assert "sets a key of" not in caplog.text


def test_a_stage_key_named_after_its_stage_takes_the_stage_prefix(monkeypatch):
    real = schema.config_keys

    def keys(cls):  # a stage config with a key of its own name (a user's min_words stage with min_words: 50)
        return real(cls) | ({"exact_dedup"} if cls is schema._config_cls("exact_dedup") else set())

    monkeypatch.setattr(schema, "config_keys", keys)
    recipe = load_recipe(None, [])
    path = override_path(recipe, ["exact_dedup", "keep"], "exact_dedup", "exact_dedup.keep=longest", False)
    assert path == ["stages", "exact_dedup", "keep"]  # it was stages.exact_dedup.exact_dedup.keep
    assert override_path(recipe, ["keep"], "exact_dedup", "keep=longest", False) == ["stages", "exact_dedup", "keep"]
