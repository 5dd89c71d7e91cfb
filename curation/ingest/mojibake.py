"""Mojibake repair: text whose UTF-8 was decoded as Windows-1252 or Latin-1 before it reached the
pipeline (``donâ€™t`` for ``don’t``, ``cafÃ©`` for ``café``, ``Â`` before a no-break space), or
whose Windows-1252 punctuation was read as Latin-1 and left as C1 control characters
(``\\x93quoted\\x94``).

Such text tokenizes into rare byte sequences, reads as noise to every quality classifier, and hides
exact duplicates of the clean copy. ``ftfy``'s encoding fixer (the one NeMo Curator's
``UnicodeReformatter`` and datatrove's ``FTFYFormatter`` call) undoes it, and only it: no other
normalisation (quotes, ligatures, width) is applied. It runs only on the texts a cheap test flags: a
C1 control character, or a character of U+00C2–U+00F4 (what a UTF-8 lead byte becomes) followed by
one a continuation byte becomes. Of the 2,485 real web texts the benchmark reads, 35 are flagged and
20 changed, each a real repair (one that quotes mojibake is left as it is) (benchmarks/ingest/bench_mojibake.py).

Code is left as it is: its string literals may hold such characters on purpose, and a repair would
change what the program does.

>>> repair("donâ€™t"), repair("caf\\u00c3\\u00a9"), repair("\\x93quoted\\x94"), repair("NÃO É"), repair("plain")
('don’t', 'café', '“quoted”', 'NÃO É', 'plain')
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

#: what a UTF-8 continuation byte (0x80–0xBF) becomes when read as Windows-1252 or Latin-1
_CONTINUATION = (
    "\x80-\xbf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014\u2018-\u201a"
    "\u201c-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122"
)
#: a C1 control character, or a UTF-8 lead byte read as Latin-1 (Â … ô) followed by a continuation byte
#: (one character class first: the regex engine scans for it fast, 2-3x an alternation on real web text)
FLAG = re.compile(f"[\x80-\x9f\xc2-\xf4](?:(?<=[\x80-\x9f])|[{_CONTINUATION}])")
#: sources whose text is never repaired
KEPT_AS_IS = frozenset({"code"})
#: the private column of the parsed and extracted rows that marks a repaired text (counted in stats.json)
REPAIRED = "_repaired"
#: key of the figures ingest records (stats.json ``extra``) of the repaired texts
FIGURES = "mojibake_repaired"


def flagged(text: str) -> bool:
    """Whether ``text`` may hold mojibake (the cheap test; ASCII text never does)."""
    return not text.isascii() and FLAG.search(text) is not None


def repair(text: str) -> str:
    """``text`` with its mojibake undone (the same object when the test flags nothing). The text is
    repaired in pieces of at most :data:`PIECE` characters, cut after a line or else at a space, and
    only the pieces the test flags (the flagged real web texts: 6.6x less CPU than whole, the same
    result on each; a 3 M-character line took 3 s whole); a piece keeps its text where the repair would
    damage it (:func:`_repaired`)."""
    if not flagged(text):
        return text
    return "".join(_repaired(piece) if flagged(piece) else piece for piece in _pieces(text))


#: characters repaired at a time
PIECE = 2000
#: a UTF-8 sequence as Windows-1252 or Latin-1 shows it: a lead byte's character and continuation bytes'
_SEQUENCE = re.compile(f"[\xc2-\xf4][{_CONTINUATION}]+")
#: what a wrong repair leaves: private-use characters (GBK bytes read as UTF-8) and replacement characters
_DAMAGE = re.compile("[\ue000-\uf8ff\ufffd]")
#: four Latin-1 characters in a row left after a repair: text of another legacy encoding (GBK, Windows-1250)
#: read as Latin-1, which the fixer cannot put back and only rewrites into other garbage
_LEGACY = re.compile("[\x80-\xff]{4,}")
#: characters either side of a sequence where what it stands for, written out, makes it a quotation
QUOTED_WITHIN = 100


def _pieces(text: str) -> Iterator[str]:
    """``text`` cut into consecutive pieces of at most :data:`PIECE` characters (after a newline, else
    after a space, else anywhere)."""
    start = 0
    while len(text) - start > PIECE:
        end = start + PIECE
        cut = text.rfind("\n", start + PIECE // 2, end)
        cut = cut if cut >= 0 else text.rfind(" ", start + PIECE // 2, end)
        cut = cut + 1 if cut >= 0 else end
        yield text[start:cut]
        start = cut
    yield text[start:]


def _repaired(piece: str) -> str:
    """``piece`` repaired, or as it is where the repair would damage it: a text that quotes mojibake
    beside what it stands for (``I saw "Ã¤" instead of "ä"``), or one in another legacy encoding whose
    "repair" makes private-use or replacement characters or leaves runs of Latin-1 characters (a GBK
    page read as Latin-1)."""
    from ftfy import fix_encoding

    for seq in _SEQUENCE.finditer(piece):
        for codec in ("cp1252", "latin-1"):
            try:
                meant = seq.group().encode(codec).decode("utf-8")
            except UnicodeError:
                continue
            near = (
                piece[max(seq.start() - QUOTED_WITHIN, 0) : seq.start()]
                + " "
                + piece[seq.end() : seq.end() + QUOTED_WITHIN]
            )
            if meant.strip() and meant in _SEQUENCE.sub(" ", near):
                return piece
            break
    fixed = fix_encoding(piece)
    if len(_DAMAGE.findall(fixed)) > len(_DAMAGE.findall(piece)) or _LEGACY.search(fixed):
        return piece
    return fixed


def repair_texts(texts: Sequence[str], sources: Sequence[str]) -> tuple[list[str], list[bool]]:
    """``texts`` repaired (those of :data:`KEPT_AS_IS` sources left as they are) and, per text,
    whether it changed."""
    out = [t if s in KEPT_AS_IS else repair(t) for t, s in zip(texts, sources, strict=True)]
    return out, [a is not b and a != b for a, b in zip(texts, out, strict=True)]


def repair_part(df: pd.DataFrame, rows: np.ndarray, texts: list[str]) -> list[str]:
    """Repair ``texts``, the texts of ``df``'s ``rows`` (a boolean mask, in row order), in ``df`` too;
    the repaired rows are marked ``"mojibake"`` in :data:`REPAIRED`. Returns the texts as repaired."""
    out, changed = repair_texts(texts, df.loc[rows, "source"].tolist())
    if any(changed):
        where = df.index[rows][np.asarray(changed)]
        df.loc[where, "text"] = [t for t, c in zip(out, changed, strict=True) if c]
        if REPAIRED not in df.columns:
            df[REPAIRED] = pd.Series([None] * len(df), index=df.index, dtype=object)
        df.loc[where, REPAIRED] = "mojibake"
    return out
