"""A record's ``language`` field that names a natural language, kept out of the ``language`` column.

The schema's ``language`` column is the programming language of a code file (and, for ``code_web``,
of a page's main code blocks); the natural language of every text is ``lang``, which ingest
identifies from the text itself (:mod:`classifiers.langid`). Web corpora often carry a field
``language`` of their own that names the text's natural language (``zh`` in the shared Chinese
corpora, ``cmn_Hani`` in FineWeb-2): on a document whose source is not code, such a value is kept
in ``meta`` under the field's name (as any field that fills no column is), and the column stays
empty. A programming language (``Python``, ``C++``) stays in the column, as it does on code.

>>> [natural_language(v) for v in ("zh", "zh-CN", "zh_Hans", "cmn_Hani", "eng", "cmn", "Python", "C++", "Go", "asm")]
[True, True, True, True, True, True, False, False, False, False]
>>> moved_to_meta("zh", "web"), moved_to_meta("zh", "code"), moved_to_meta("Python", "web")
(True, False, False)
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from classifiers.langid import CODES, LID176_LABELS

#: Sources whose ``language`` is a programming language, whatever it reads like (``sh``, ``pl``, ``ml``
#: are also file extensions of shell, Perl and ML code).
CODE_SOURCES = frozenset({"code", "code_web"})
#: ISO 639-2 (T and B) and ISO 639-3 codes of the languages ``lang`` names (and of Chinese's varieties), as
#: a dataset writes them without a script (``eng``, ``cmn``); not ``asm`` (Assamese, also assembly).
THREE_LETTER = frozenset((
    "afr alb als amh ara arb arg arm ava aze azj bak baq bel ben bod bos bre bul bur cat ces che chi chv cls cmn cnr "
    "cor cos cym cze dan deu div drh dut ekk ell eng epo est eus fas fil fin fra fre fry geo ger gla gle glg glv gre "
    "grn gug guj hat hbs heb hin hrv hun hye ice ido ile ina ind isl ita jav jpn kan kat kaz khk khm kir kmr kom kor "
    "kpv kur lao lat lav lim lit ltz lvs mac mal mar may mkd mlg mlt mol mon msa mya nep nld nno nob nor npi oci ori "
    "ory oss pan pbu per pes plt pol por prs pus que quz roh ron rum rus san sin slk slo slv snd som spa sqi srd srp "
    "sun swa swe swh tam tat tel tgk tgl tha tib tuk tur uig ukr urd uzb uzn vie vol wel wln ydd yid yor zho zsm "
    "hsn " + LID176_LABELS
).split()) - {"asm"}
#: ISO 639-1 codes of languages ``lang`` does not name; not ``cr`` (Crystal) nor ``ts`` (TypeScript), file extensions too.
_OTHER_639_1 = ("aa ab ae ak ay bi bm ch cu dz ee ff fj fo ha ho hz ig ii ik iu kg ki kj kl kr ks lg ln lu mh mi na nb nd ng "
                "nr nv ny oj om pi rn rw se sg sm sn ss st ti tn to tw ty ve wo xh za zu")
TWO_LETTER = frozenset(_OTHER_639_1.split())
#: A BCP-47 / ISO 639 tag: language, then an optional script (``Hans``, ``Hani``) and region (``CN``, ``419``),
#: joined by ``-`` or ``_`` (FineWeb-2 and GlotLID write ``cmn_Hani``).
_TAG = re.compile(r"(?P<lang>[a-z]{2,3})(?:[-_](?P<script>[A-Za-z][a-z]{3}))?(?:[-_](?:[A-Za-z]{2}|\d{3}))?")
#: Key of the figures ingest records (stats.json ``extra``) of the values kept in meta.
FIGURES = "language_field_in_meta"
#: The private column of the parsed rows holding the value a row's ``language`` field had when it went to meta.
MOVED = "_language_in_meta"


def natural_language(value: Any) -> bool:
    """Whether ``value`` is a natural-language code: ISO 639-1 (``zh``, the codes of ``lang``), ISO 639-2/3
    (``eng``, ``cmn``), or either with a script or region (``zh-CN``, ``zh_Hans``); a code of another
    language counts with a script in ISO 15924's case (``quz_Latn``). Lower case first, as ISO 639 writes it (``Io``
    is the programming language)."""
    m = _TAG.fullmatch(value.strip()) if isinstance(value, str) else None
    if m is None:
        return False
    lang, script = m["lang"], m["script"]
    return lang in CODES or lang in TWO_LETTER or lang in THREE_LETTER or (script is not None and script[0].isupper())


def moved_to_meta(value: Any, source: Any) -> bool:
    """Whether a record's ``language`` value goes to ``meta`` instead of the column: a natural-language
    code on a document whose source is not code."""
    return source not in CODE_SOURCES and natural_language(value)


def moved_counts(df: pd.DataFrame, column: str = MOVED) -> pd.DataFrame:
    """Per (file, value): the rows of a parsed part whose field went to meta, by the private ``column`` that
    holds the values (this module's :data:`MOVED`, or :data:`curation.ingest.source_field.MOVED`)."""
    if column not in df.columns or not df[column].notna().any():
        return MOVED_META.copy()
    hit = df[df[column].notna()]
    out = hit.groupby([hit["_file"].astype(str), hit[column].astype(str)], sort=True).size().rename("rows").reset_index()
    out = out.set_axis(["file", "value", "rows"], axis=1).assign(column=column)
    return out[list(MOVED_META.columns)].astype({"rows": "int64"})


MOVED_META = pd.DataFrame({"column": pd.Series(dtype=object), "file": pd.Series(dtype=object), "value": pd.Series(dtype=object),
                           "rows": pd.Series(dtype="int64")})


def moved_figures(counts: pd.DataFrame, shown: int = 3, column: str = MOVED, key: str = FIGURES) -> dict[str, Any] | None:
    """What ingest records under ``key`` of the values of ``column`` kept in meta (None when there were none):
    documents, files, documents per value, and the first ``shown`` files with theirs."""
    counts = counts[counts["column"] == column] if counts is not None else None
    if counts is None or counts.empty:
        return None
    per_file = counts.groupby("file", sort=True)["rows"].sum()
    per_value = counts.groupby("value", sort=True)["rows"].sum()
    return {key: {"documents": int(counts["rows"].sum()), "files": len(per_file),
                  "values": {str(k): int(v) for k, v in per_value.items()},
                  "examples": {str(k): int(v) for k, v in per_file.head(shown).items()}}}


def figures_head(stats: dict[str, Any], key: str) -> tuple[str, str] | None:
    """For the figures ingest recorded under ``key`` (:func:`moved_figures`): the line's start, "ingest: N
    records of F file(s) (the first files)", and the five commonest values; None when there are none."""
    fig = (stats.get("extra") or {}).get(key) if stats.get("stage") == "ingest" else None
    if not fig:
        return None
    values = ", ".join(f"{f'[{k}]' if ', ' in k else k}={v:,}"  # a value naming several fields, in brackets: [raw, raw2]=1
                       for k, v in sorted(fig["values"].items(), key=lambda kv: (-kv[1], kv[0]))[:5])
    files = ", ".join(fig["examples"]) + (", …" if fig["files"] > len(fig["examples"]) else "")
    return f"ingest: {fig['documents']:,} records of {fig['files']:,} file(s) ({files})", values


def moved_note(stats: dict[str, Any]) -> str | None:
    """One line for an ingest whose records had a natural-language ``language`` field (None otherwise)."""
    if (head := figures_head(stats, FIGURES)) is None:
        return None
    start, values = head
    return (f"{start} have a natural-language code in "
            f"their language field ({values}); the language column is the programming language of code, so on documents "
            "whose source is not code or code_web the value is kept in meta under the field's name and the column is "
            "left empty; the text's natural language is the lang column, identified from the text")
