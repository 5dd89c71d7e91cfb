"""The tiktoken encoding built from the cache on disk is the one built from ``tokenizer.json``:
same ids on varied text; a changed file, a corrupt entry or an unwritable folder never gives
another encoding; processes racing to write leave one valid entry."""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import curation.tokenizer_cache as cache
import curation.tokenizer_convert as tokenizer_convert
import curation.tokens as tokens

REPO = Path(__file__).resolve().parents[2]
TEXTS = [
    "",
    "hello world",
    "The quick brown fox jumps over the lazy dog. I'M HERE, you'LL see 12345678 3.14159 ...!!!",
    "def f(x):\r\n\treturn x ** 2  # square\n\n\n    if y: pass\n",
    "naïve café — 東京 中文的文本，标点。繁體中文與日本語のテキスト",
    "e\u0301 composed by NFC, ﬁ ligature kept, Å",
    "😀 emoji 👩‍👩‍👧 and \u200b zero width, 🇫🇷",
    "special <|endoftext|> and <|fim_prefix|>a<|fim_middle|>b<|fim_suffix|> <|im_start|>user\n<think>",
    "a" * 3000 + " " * 300 + "\n" * 50,
    "\x00\x01\x7f control bytes \ufeff BOM",
]


def reference_counter(path: Path):
    """``load_fast_counter`` before the cache: every process parses and converts the file."""
    import tiktoken

    spec = json.loads(path.read_text(encoding="utf-8"))
    pattern = tokenizer_convert._byte_level_split(spec)
    ranks = tokenizer_convert._byte_ranks(spec["model"]["vocab"])
    special = {t["content"]: t["id"] for t in spec.get("added_tokens", [])}
    enc = tiktoken.Encoding(f"curation:{path}", pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)
    return enc, (spec.get("normalizer") or {}).get("type") == "NFC"


@pytest.fixture
def tok_file(tmp_path, monkeypatch) -> Path:
    """A copy of the Qwen tokenizer.json and an empty cache folder, both under tmp_path."""
    monkeypatch.setenv("CURATION_TOKENIZER_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tok" / "tokenizer.json"
    path.parent.mkdir()
    shutil.copyfile(tokens.qwen_tokenizer_path(), path)
    return path


def load(path: Path):
    """One process's first load (the per-process lru_cache is bypassed)."""
    return tokens.load_fast_counter.__wrapped__(str(path))


def count_conversions(monkeypatch) -> list[Path]:
    calls: list[Path] = []
    convert = tokens.convert

    def counted(path):
        calls.append(path)
        return convert(path)

    monkeypatch.setattr(tokens, "convert", counted)
    return calls


def assert_same_encoding(fast, ref) -> None:
    (enc, nfc), (ref_enc, ref_nfc) = fast, ref
    assert nfc == ref_nfc
    assert enc._mergeable_ranks == ref_enc._mergeable_ranks
    assert enc._special_tokens == ref_enc._special_tokens
    assert enc._pat_str == ref_enc._pat_str and enc.n_vocab == ref_enc.n_vocab and enc.name == ref_enc.name
    for text in TEXTS:
        assert enc.encode(text, allowed_special="all") == ref_enc.encode(text, allowed_special="all"), text


def test_a_second_load_reads_the_cache_and_gives_the_same_ids(tok_file, monkeypatch):
    ref = reference_counter(tok_file)
    calls = count_conversions(monkeypatch)
    assert_same_encoding(load(tok_file), ref)
    assert len(calls) == 1 and len(list((tok_file.parent.parent / "cache").glob("*.npz"))) == 1
    monkeypatch.setattr(tokens, "convert", lambda path: pytest.fail("the cached entry was not used"))
    assert_same_encoding(load(tok_file), ref)


def test_counts_and_ids_through_the_public_functions_match_the_reference(tok_file, monkeypatch):
    ref_enc, _ = reference_counter(tok_file)
    load(tok_file)  # writes the entry: the calls below read it
    tokens.load_fast_counter.cache_clear()
    try:
        counts = tokens.count_tokens(TEXTS, str(tok_file)).tolist()
        ids = [a.tolist() for a in tokens.encode(TEXTS, str(tok_file))]
        eod = tokens.token_id(str(tok_file), "<|endoftext|>")
    finally:
        tokens.load_fast_counter.cache_clear()
    import unicodedata

    # every added token matched but the EOD token, whose text in a document is text (tokens.EOD_TEXT)
    allowed = ref_enc.special_tokens_set - {tokens.EOD_TEXT}
    expected = [ref_enc.encode(unicodedata.normalize("NFC", t), allowed_special=allowed, disallowed_special=()) for t in TEXTS]
    assert ids == expected and counts == [len(e) for e in expected]
    assert eod == ref_enc._special_tokens["<|endoftext|>"]


def test_a_changed_file_is_converted_again(tok_file, monkeypatch):
    calls = count_conversions(monkeypatch)
    load(tok_file)
    spec = json.loads(tok_file.read_text(encoding="utf-8"))
    new_id = max(t["id"] for t in spec["added_tokens"]) + 1
    spec["added_tokens"].append({"id": new_id, "content": "<|new|>", "special": True})
    tok_file.write_text(json.dumps(spec), encoding="utf-8")
    enc, _ = load(tok_file)
    assert len(calls) == 2 and enc.encode("a<|new|>", allowed_special="all")[-1] == new_id
    assert_same_encoding((enc, True), reference_counter(tok_file))
    st = tok_file.stat()  # same size, only the modification time differs: still a new entry
    os.utime(tok_file, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    load(tok_file)
    assert len(calls) == 3


def _truncate(p: Path, key) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garbage(p: Path, key) -> None:
    p.write_bytes(b"not an npz at all")


def _empty(p: Path, key) -> None:
    p.write_bytes(b"")


def _rewrite(p: Path, edit, digest: bool = True) -> None:
    """Load an entry, let ``edit(arrays, meta)`` change it, and save it back with its SHA-256 redone."""
    with np.load(p) as z:
        arrays, meta = {k: z[k].copy() for k in cache.ARRAYS}, json.loads(z["meta"].tobytes())
    edit(arrays, meta)
    if digest:
        meta["sha256"] = cache._digest(arrays)
    np.savez(p, **arrays, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))


def _flip_token_byte(p: Path, key) -> None:
    """Arrays that no longer match their SHA-256 (a readable .npz: the zip's own CRC does not catch it)."""
    _rewrite(p, lambda arrays, meta: arrays["lines"].__setitem__(1000, arrays["lines"][1000] ^ 1), digest=False)


def _other_file(p: Path, key) -> None:
    """An entry for another tokenizer.json stored under this file's name."""
    _rewrite(p, lambda arrays, meta: meta.__setitem__("size", meta["size"] + 1))


def _duplicate_token(p: Path, key) -> None:
    """Consistent arrays whose last token repeats the first: rejected, never handed to tiktoken."""

    def edit(arrays, meta):
        parts = arrays["lines"].tobytes().split(b"\n")
        arrays["lines"] = np.frombuffer(b"\n".join([*parts[:-1], parts[0]]), dtype=np.uint8)

    _rewrite(p, edit)


def _repeated_id(p: Path, key) -> None:
    """A token with a newline given the id of a token without one (tiktoken would panic)."""
    _rewrite(p, lambda arrays, meta: arrays["other_ids"].__setitem__(0, arrays["line_ids"][0]))


def _missing_array(p: Path, key) -> None:
    """An entry of another layout."""
    with np.load(p) as z:
        kept = {k: z[k] for k in z.files if k != "other_ends"}
    np.savez(p, **kept)


@pytest.mark.parametrize(
    "corrupt",
    [_truncate, _garbage, _empty, _flip_token_byte, _other_file, _duplicate_token, _repeated_id, _missing_array],
)
def test_a_corrupt_entry_is_ignored_and_rewritten(tok_file, monkeypatch, corrupt):
    ref = reference_counter(tok_file)
    load(tok_file)
    key = cache.source_key(tok_file)
    entry = cache.entry_path(key)
    corrupt(entry, key)
    assert cache.load(key) is None
    calls = count_conversions(monkeypatch)
    assert_same_encoding(load(tok_file), ref)
    assert len(calls) == 1 and cache.load(key) is not None


def test_threads_racing_to_write_leave_one_valid_entry(tok_file):
    key = cache.source_key(tok_file)
    conv = tokenizer_convert.convert(tok_file)
    start = threading.Barrier(6)
    seen: list[object] = []

    def write():
        start.wait()
        cache.store(key, conv)
        seen.append(cache.load(key))

    threads = [threading.Thread(target=write) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s == conv for s in seen) and cache.load(key) == conv
    assert [p.name for p in cache.cache_dir().iterdir()] == [cache.entry_path(key).name]  # no temp file left


def test_processes_racing_on_an_empty_cache_count_the_same(tok_file):
    """Two fresh processes (as two Dask workers) load the same file at once into an empty cache."""
    code = (
        "import sys, curation.tokens as t; enc, _ = t.load_fast_counter(sys.argv[1]);"
        "print(enc.encode('東京 hello <|endoftext|> 😀', allowed_special='all'))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tok_file)], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    ref_enc, _ = reference_counter(tok_file)
    assert outs == [f"{ref_enc.encode('東京 hello <|endoftext|> 😀', allowed_special='all')}\n"] * 2
    assert cache.load(cache.source_key(tok_file)) is not None
    assert len(list(cache.cache_dir().iterdir())) == 1


def test_an_unwritable_cache_folder_only_costs_the_conversion(tok_file, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CURATION_TOKENIZER_CACHE", str(blocker / "cache"))
    assert_same_encoding(load(tok_file), reference_counter(tok_file))


def test_a_file_that_cannot_be_converted_writes_nothing(tok_file):
    spec = json.loads(tok_file.read_text(encoding="utf-8"))
    spec["pre_tokenizer"] = {"type": "Whitespace"}
    tok_file.write_text(json.dumps(spec), encoding="utf-8")
    assert load(tok_file) is None
    assert not cache.cache_dir().exists()


def test_the_default_folder_is_under_the_home_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("CURATION_TOKENIZER_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / ".cache" / "curation" / "tokenizers"


def test_doctests():
    import doctest

    assert doctest.testmod(cache).failed == 0
