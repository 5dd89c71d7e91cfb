"""Copies that differ only by invisible format characters (soft hyphens, zero-width spaces, a byte
order mark) got through exact dedup and MinHash: exact's key kept them, and MinHash's folding made
a soft hyphen inside a word a word break."""

from curation.dedup.exact import exact_keys
from curation.dedup.shingles import ShingleSpec, shingles
from curation.text import drop_format, normalize_exact

PAGE = "La coopération internationale renforce la résilience des communautés rurales face au climat."
SOFT = PAGE.replace("coopération", "co\u00adopé\u00adra\u00adtion").replace("résilience", "ré\u00adsi\u00adlience")
MARKED = "\ufeff" + SOFT.replace(" face", "\u200b face")


def test_format_characters_are_dropped_from_the_keys():
    assert drop_format(MARKED) == PAGE and drop_format("plain ascii") == "plain ascii"
    assert normalize_exact(MARKED) == normalize_exact(PAGE)
    spec = ShingleSpec("script", 5)
    assert shingles(SOFT, spec) == shingles(PAGE, spec)


def test_exact_dedup_hashes_the_copies_alike():
    import pandas as pd

    keys = exact_keys(pd.DataFrame({"doc_id": ["a", "b"], "text": [PAGE, MARKED]}))
    assert keys["hash"][0] == keys["hash"][1]
