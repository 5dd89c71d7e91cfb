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
21 changed, each a real repair (benchmarks/ingest/bench_mojibake.py).

Code is left as it is: its string literals may hold such characters on purpose, and a repair would
change what the program does.

>>> repair("donâ€™t"), repair("caf\\u00c3\\u00a9"), repair("\\x93quoted\\x94"), repair("NÃO É"), repair("plain")
('don’t', 'café', '“quoted”', 'NÃO É', 'plain')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
    """``text`` with its mojibake undone (the same object when the test flags nothing)."""
    if not flagged(text):
        return text
    from ftfy import fix_encoding

    # line by line, the lines the test flags alone: 6.6x less CPU than the whole text on the flagged
    # real web texts, with the same result on each (benchmarks/ingest/bench_mojibake.py)
    lines = text.split("\n")
    return "\n".join(fix_encoding(line) if flagged(line) else line for line in lines)


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
