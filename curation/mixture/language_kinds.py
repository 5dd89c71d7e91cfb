"""A ``mixture.language_repeat`` entry that changes nothing because none of its language's documents
is of a kind in ``mixture.language_kinds`` (the factor applies only to those kinds): a warning, in
the manifests and ``stats.json``, naming the language, the kinds that hold its documents and the
setting to change.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

from curation.mixture.plan import lookup

log = logging.getLogger(__name__)


def language_kind_warnings(
    agg: pd.DataFrame, language_repeat: Mapping[str, float], language_kinds: Any
) -> list[dict[str, Any]]:
    """A warning (also logged) per entry of ``language_repeat`` (factor other than 1) whose languages have
    documents in the accounting ``agg`` (rows per phase, group, language), none of a kind in ``language_kinds``
    (documents of repeat factor 0, ``zero_documents``, are shown in no shard whatever the factor: not counted).

    >>> agg = pd.DataFrame({"phase": ["p1", "p2", "p1"], "group": ["code_web/all", "code_web/all", "web/high"],
    ...                     "lang": ["zh", "zh", "en"], "documents": [46, 46, 9], "zero_documents": [0, 0, 3]})
    >>> [w["message"] for w in language_kind_warnings(agg, {"zh": 2.0, "en": 1.5}, ("web", "web_edu"))]  # doctest: +NORMALIZE_WHITESPACE
    ['mixture.language_repeat gives zh a factor of 2.0, which changes nothing: the factor applies only to the kinds of
    mixture.language_kinds (web, web_edu), and none of the documents of zh is of those kinds (they are code_web: 46 documents);
    add their kind to mixture.language_kinds (mixture.language_kinds=[web, web_edu, code_web]) or drop zh from
    mixture.language_repeat']
    """
    if not language_repeat or agg.empty:
        return []
    kinds = set(language_kinds)
    rows = agg.assign(
        kind=agg["group"].str.split("/").str[0],
        lang=agg["lang"].astype(str),
    )
    # the documents a factor scales (those of repeat factor 0 stay out of every shard whatever it is); a
    # document is counted in every phase that mixes its kind: the most any phase holds of a kind
    held = rows.groupby(["lang", "kind", "phase"])["documents"].sum().groupby(level=["lang", "kind"]).max()
    held = held[held > 0]
    out = []
    for key, factor in language_repeat.items():
        langs = sorted(
            lang for lang in held.index.get_level_values("lang").unique() if _entry(language_repeat, lang) == key
        )
        if float(factor) == 1.0 or not langs:
            continue
        of = held[held.index.get_level_values("lang").isin(langs)].groupby(level="kind").sum()
        if of.empty or of[of.index.isin(kinds)].sum() > 0:
            continue
        named = key if langs == [key] else f"{key} ({', '.join(langs)})"
        message = (
            f"mixture.language_repeat gives {named} a factor of {float(factor)}, which changes nothing: the factor applies "
            f"only to the kinds of mixture.language_kinds ({', '.join(language_kinds)}), and none of the documents of {named} "
            f"is of those kinds (they are {', '.join(f'{k}: {int(n):,} documents' for k, n in of.items())}); add their kind to "
            f"mixture.language_kinds (mixture.language_kinds=[{', '.join([*language_kinds, *of.index])}]) or drop {key} "
            "from mixture.language_repeat"
        )
        out.append(
            {
                "check": "language_kinds",
                "phase": None,
                "group": None,
                "value": str(key),
                "limit": None,
                "message": message,
            }
        )
        log.warning("mixture: %s", message)
    return out


def _entry(table: Mapping[str, float], lang: str) -> str | None:
    """The key of ``table`` that decides ``lang``'s factor, as :func:`~curation.mixture.plan.lookup` reads it."""
    keys = list(table)
    index = int(lookup({k: float(i) for i, k in enumerate(keys)}, lang, -1.0))
    return keys[index] if index >= 0 else None
