"""Fill-in-the-middle (Bavarian et al. 2022): character-level split at two random points.

With probability ``rate`` a document becomes ``prefix | middle | suffix`` rearranged as
PSM (``<pre>prefix<suf>suffix<mid>middle``) or, with probability ``spm_rate``, SPM in the
StarCoder/Megatron variant (``<pre><suf>suffix<mid>prefix middle``). The random draws come from
a generator seeded by (seed, doc_id), so the result does not depend on partitioning.

>>> s = FimSentinels("<P>", "<M>", "<S>")
>>> out, mode = fim_transform("abcdef", "doc-1", seed=7, rate=1.0, spm_rate=0.0, sentinels=s)
>>> mode, fim_inverse(out, mode, s)
('psm', 'abcdef')
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

MODES = ("psm", "spm")
NONE = "none"
SKIPPED = "skipped_sentinel"


@dataclasses.dataclass(frozen=True)
class FimSentinels:
    """The three sentinel strings (Qwen's special tokens by default)."""

    prefix: str = "<|fim_prefix|>"
    middle: str = "<|fim_middle|>"
    suffix: str = "<|fim_suffix|>"

    def occurs_in(self, text: str) -> bool:
        return self.prefix in text or self.middle in text or self.suffix in text


def doc_rng(seed: int, key: str) -> np.random.Generator:
    """A generator seeded by (seed, key) through SHA-256, stable across processes."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def fim_split(text: str, rng: np.random.Generator) -> tuple[str, str, str]:
    """Split ``text`` at two uniform character positions (sorted) into prefix, middle, suffix.

    >>> p, m, s = fim_split("hello world", np.random.default_rng(0))
    >>> p + m + s
    'hello world'
    """
    lo, hi = sorted(int(x) for x in rng.integers(0, len(text) + 1, size=2))
    return text[:lo], text[lo:hi], text[hi:]


def fim_format(prefix: str, middle: str, suffix: str, mode: str, s: FimSentinels) -> str:
    """The FIM string of three parts in ``mode`` (psm | spm)."""
    if mode == "psm":
        return f"{s.prefix}{prefix}{s.suffix}{suffix}{s.middle}{middle}"
    if mode == "spm":
        return f"{s.prefix}{s.suffix}{suffix}{s.middle}{prefix}{middle}"
    raise ValueError(f"FIM mode must be one of {MODES}, not {mode!r}")


def fim_transform(
    text: str, key: str, *, seed: int, rate: float, spm_rate: float, sentinels: FimSentinels
) -> tuple[str, str]:
    """``(text', mode)``: the FIM version of ``text`` and its mode, or the text and ``none``.

    Texts that already contain a sentinel string are left alone (mode ``skipped_sentinel``)
    because their FIM form could not be parsed back unambiguously.
    """
    rng = doc_rng(seed, key)
    if rng.random() >= rate:
        return text, NONE
    if sentinels.occurs_in(text):
        return text, SKIPPED
    mode = "spm" if rng.random() < spm_rate else "psm"
    prefix, middle, suffix = fim_split(text, rng)
    return fim_format(prefix, middle, suffix, mode, sentinels), mode


def fim_parts(text: str, mode: str, s: FimSentinels) -> tuple[str, str, str]:
    """Recover (prefix, middle, suffix) of a FIM string; for SPM, prefix+middle come joined.

    SPM stores ``prefix middle`` without a boundary, so the split between them is not
    recoverable; this returns ``(prefix+middle, "", suffix)`` for SPM.
    """
    if mode == "psm":
        if not text.startswith(s.prefix):
            raise ValueError("not a PSM string: missing the prefix sentinel")
        body = text[len(s.prefix):]
        prefix, rest = body.split(s.suffix, 1)
        suffix, middle = rest.split(s.middle, 1)
        return prefix, middle, suffix
    if mode == "spm":
        head = s.prefix + s.suffix
        if not text.startswith(head):
            raise ValueError("not an SPM string: missing the prefix+suffix sentinels")
        suffix, prefix_middle = text[len(head):].split(s.middle, 1)
        return prefix_middle, "", suffix
    raise ValueError(f"FIM mode must be one of {MODES}, not {mode!r}")


def fim_inverse(text: str, mode: str, s: FimSentinels) -> str:
    """The original text of a FIM string (identity for ``none``/``skipped_sentinel``)."""
    if mode in (NONE, SKIPPED):
        return text
    prefix, middle, suffix = fim_parts(text, mode, s)
    return prefix + middle + suffix


def fim_many(
    texts: list[str], keys: list[str], *, seed: int, rate: float, spm_rate: float, sentinels: FimSentinels
) -> tuple[list[str], list[str]]:
    """:func:`fim_transform` over lists; returns (texts, modes)."""
    out_t: list[str] = []
    out_m: list[str] = []
    for text, key in zip(texts, keys, strict=True):
        t, m = fim_transform(text, key, seed=seed, rate=rate, spm_rate=spm_rate, sentinels=sentinels)
        out_t.append(t)
        out_m.append(m)
    return out_t, out_m
