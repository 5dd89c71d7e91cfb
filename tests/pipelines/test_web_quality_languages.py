"""web_quality on a multilingual mix: languages with too few pages for buckets of their own are
ranked among themselves, and a signal their language lacks (stop words) does not mark them down."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.helpers import docs_frame
from tests.pipelines.test_web_quality_stage import run, zh_en_corpus

SMALL_PROSE = {  # clean prose of languages without a stop-word list (and the same in English)
    "en": ["The council approved the new library after a long debate. It will open next year.",
           "The old building will become a museum of local history, the mayor explained.",
           "Residents said they were pleased with the plan, although some asked for more parking.",
           "The work will cost three million euros, shared equally by the region and the town."],
    "es": ["El ayuntamiento aprobó la nueva biblioteca después de un largo debate. Abrirá el próximo año.",
           "El antiguo edificio se convertirá en un museo de historia local, según explicó la alcaldesa.",
           "Los vecinos dijeron que estaban contentos con el plan, aunque algunos pidieron más aparcamiento.",
           "La obra costará tres millones de euros y la pagarán a medias la región y el municipio."],
    "ja": ["市議会は長い議論の末、新しい図書館の建設を承認しました。来年の春に開館する予定です。",
           "古い建物は地域の歴史を紹介する博物館として生まれ変わると、市長は説明しました。",
           "住民の多くはこの計画を歓迎していますが、駐車場が足りないという声もあります。",
           "工事の費用は約三億円で、県と市が半分ずつ負担することになっています。"],
    "it": ["Il consiglio comunale ha approvato la nuova biblioteca dopo un lungo dibattito. Aprirà l'anno prossimo.",
           "Il vecchio edificio diventerà un museo di storia locale, ha spiegato la sindaca ai giornalisti.",
           "I residenti si sono detti contenti del progetto, anche se alcuni chiedono più parcheggi.",
           "I lavori costeranno tre milioni di euro, divisi a metà tra la regione e il comune."],
}
SMALL_JUNK = {
    "en": ["Home\nProducts\nCART (0)\nLOGIN\nContact", "SALE SALE\nclick here\n50% OFF\nBUY NOW"],
    "es": ["Inicio\nProductos\nCARRITO (0)\nENTRAR\nContacto", "OFERTA OFERTA\nhaz clic aquí\n50% DTO\nCOMPRA YA"],
    "ja": ["ホーム\n商品\nカート (0)\nログイン\nお問い合わせ", "セール！セール！\nここをクリック\n50%OFF\n今すぐ購入"],
    "it": ["Home\nProdotti\nCARRELLO (0)\nACCEDI\nContatti", "SALDI SALDI\nclicca qui\n50% SCONTO\nCOMPRA ORA"],
}


def pages(lang: str, n: int, junk_every: int = 2) -> list[dict]:
    """``n`` pages in ``lang``: clean prose of 2 to 4 paragraphs, and every ``junk_every``-th page
    (from the first) menus or shouting."""
    rows = []
    for i in range(n):
        prose = SMALL_PROSE[lang]
        text = "\n".join(prose[(i + k) % 4] for k in range(2 + i % 3)) if i % junk_every else SMALL_JUNK[lang][i % 4 // 2] + f" {i}"
        rows.append({"doc_id": f"{lang}{i:02d}", "text": text, "source": "web", "lang": lang,
                     "n_tokens": len(text) if lang == "ja" else len(text.split())})
    return rows


def small_languages(n_per_lang: int = 20) -> pd.DataFrame:
    """Pages of three languages under language_min_docs (50) each, 3 × 20 together."""
    return docs_frame([r for lang in ("es", "ja", "it") for r in pages(lang, n_per_lang)])


def en_zh_corpus() -> pd.DataFrame:
    """60 English pages built like the small languages' (mostly prose, as a crawl after extraction) and 60 Chinese pages."""
    zh = zh_en_corpus()
    return pd.concat([docs_frame(pages("en", 60, junk_every=4)), zh[zh["lang"] == "zh"]], ignore_index=True)


def test_clean_prose_of_small_languages_is_not_forced_to_low(tmp_path: Path) -> None:
    """Each group's lowest level holds 35 % of its tokens, so some prose is low in every language
    (the menus hold fewer tokens than that); small-language prose must fare like English prose:
    no more of it low, and some of it in the top levels (ranked against English pages, with no
    stop-word terms, Japanese prose was 7 of 10 low and no small-language page reached them)."""
    df = pd.concat([en_zh_corpus(), small_languages()], ignore_index=True)
    _, kept, _ = run(tmp_path, "mix", df=df)
    level = kept.set_index("doc_id")["quality_level"]
    en_low = (level[[f"en{i:02d}" for i in range(60) if i % 4]] == "low").mean()
    prose = {lang: level[[f"{lang}{i:02d}" for i in range(1, 20, 2)]] for lang in ("es", "ja", "it")}
    for lang, p in prose.items():
        assert (p == "low").mean() <= en_low, (lang, p.value_counts().to_dict(), en_low)
        assert (level[[f"{lang}{i:02d}" for i in range(0, 20, 2)]] == "low").all()  # the menus
    assert pd.concat(prose.values()).isin(["high", "medium_high"]).any()
    extra = json.loads((tmp_path / "mix" / "stats.json").read_text())["extra"]
    assert extra["language_groups"] == {"en": 60, "zh": 60, "*": 60}
    assert extra["small_languages_ranked_against"] == "their own pages"
    assert extra["thresholds_by_lang"]["*"]["heuristics"] != extra["thresholds"]["heuristics"]


def test_english_and_chinese_levels_do_not_change_with_small_languages(tmp_path: Path) -> None:
    both = en_zh_corpus()
    _, alone, _ = run(tmp_path / "a", "alone", df=both)
    _, mixed, _ = run(tmp_path / "b", "mixed", df=pd.concat([both, small_languages()], ignore_index=True))
    cols = ["quality_bucket", "quality_level", "quality_score_heuristics"]
    a = alone.set_index("doc_id")[cols].sort_index()
    m = mixed.set_index("doc_id").loc[a.index, cols]
    pd.testing.assert_frame_equal(a, m)


def test_a_few_small_language_pages_are_bucketed_against_the_whole_corpus(tmp_path: Path) -> None:
    few = small_languages(4)  # 12 pages together: too few for 20 buckets of their own
    _, kept, _ = run(tmp_path, "few", df=pd.concat([en_zh_corpus(), few], ignore_index=True))
    extra = json.loads((tmp_path / "few" / "stats.json").read_text())["extra"]
    assert extra["language_groups"]["*"] == 12
    assert extra["small_languages_ranked_against"] == "the whole corpus"
    assert extra["thresholds_by_lang"]["*"] == extra["thresholds"]  # the whole corpus' cut points
    assert kept.loc[kept["doc_id"].isin(few["doc_id"]), "quality_level"].notna().all()
