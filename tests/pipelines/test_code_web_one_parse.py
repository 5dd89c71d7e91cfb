"""One parse per page: ingest reads the code tags from the tree its extractor parsed; code_web
parses only the pages it recalls, and recalls the same pages as a parse of every page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from curation.quality.html_code import code_tag_stats, parse
from pipelines.cli import main as curate
from pipelines.stages.code_web import CodeWebConfig, load_code_tags, load_pages, score_frame
from tests.helpers import read_parts, run_one

SAMPLE_WARC = Path(__file__).resolve().parents[2] / "sample_data" / "crawl" / "crawl.warc.gz"


@pytest.fixture(scope="module")
def crawl_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder: ingest of the sample crawl, then code_web with ingest's code tags."""
    if not SAMPLE_WARC.exists():
        pytest.skip("sample_data/crawl is not generated (python sample_data/generate.py)")
    root = tmp_path_factory.mktemp("oneparse")
    assert curate(["ingest", "--input", str(SAMPLE_WARC), "--output", str(root / "00_ingest"), "--scheduler", "synchronous",
                   "--quiet", "--cache-dir", str(root / ".cache"), "tokenizer=whitespace"]) == 0
    run_one("code_web", root / "00_ingest", root / "60_code_web", ["ingest.tokenizer=whitespace"])
    return root


def test_ingest_records_the_code_tags_a_parse_of_the_page_gives(crawl_run: Path) -> None:
    kept = read_parts(crawl_run / "00_ingest" / "docs")
    html = read_parts(crawl_run / "00_ingest" / "artifacts" / "html").drop_duplicates("doc_id", keep="last").set_index("doc_id")["html"]
    tags = read_parts(crawl_run / "00_ingest" / "artifacts" / "code_tags").set_index("doc_id")
    assert set(kept["doc_id"]) <= set(tags.index)  # every kept crawled page has its tags
    for doc_id in kept["doc_id"]:
        root = parse(html[doc_id])
        stats = code_tag_stats(None, root)
        row = tags.loc[doc_id]
        assert (bool(row["has_html"]), int(row["pre_blocks"]), int(row["code_elements"]), int(row["highlighted"]),
                int(row["code_chars"])) == (root is not None, stats.pre_blocks, stats.code_elements, stats.highlighted,
                                            stats.code_chars), doc_id
    assert (tags.loc[kept["doc_id"], "pre_blocks"] > 0).sum() >= 3  # the crawl has code pages: the check is not vacuous


def test_code_web_parses_only_the_pages_it_recalls_and_recalls_what_a_parse_of_every_page_does(crawl_run: Path) -> None:
    one = crawl_run / "60_code_web"
    stats = pd.read_json(one / "stats.json", typ="series")["extra"]
    kept = read_parts(one / "docs").set_index("doc_id").sort_index()
    recalled = int(kept["code_web_recall"].notna().sum())
    assert stats["code_tags_artifact"] and recalled >= 3 and stats["recalled_pages"] == recalled
    assert 0 < stats["html_parsed_pages"] <= recalled < len(kept) // 2  # no page it does not recall is parsed
    scores = read_parts(one / "artifacts" / "scores").set_index("doc_id")
    assert not scores.loc[kept.index[kept["code_web_recall"].isna()], "html_parsed"].any()

    # the peer: the same scoring with a parse of every page with HTML (no ingest code tags)
    docs = read_parts(crawl_run / "00_ingest" / "docs")
    cfg = CodeWebConfig()
    pages = load_pages(crawl_run / "00_ingest" / "artifacts" / "html", 0, docs["doc_id"].tolist())
    peer = score_frame(docs, cfg, "whitespace", pages).set_index("doc_id").sort_index()
    assert peer["html_parsed"].sum() == len(pages) == len(docs)
    scores = scores.sort_index()
    cols = ["has_html", "pre_blocks", "code_elements", "highlighted", "code_chars", "content_prob", "reparsed", "score", "n_tokens"]
    def plain(f: pd.DataFrame) -> pd.DataFrame:
        return f[cols].astype(object).where(f[cols].notna(), None)

    pd.testing.assert_frame_equal(plain(scores), plain(peer))
    same = cfg.recalled(peer.reset_index())
    assert (pd.Series(same, index=peer.index).dropna() == kept.loc[peer.index, "code_web_recall"].dropna()).all()
    assert pd.Series(same, index=peer.index).notna().sum() == recalled


def test_pages_without_code_tags_rows_score_as_pages_without_html(crawl_run: Path) -> None:
    """A slice of pages ingest has no HTML for (text-only records): no tags, no parse, recall by the classifier only."""
    tags = load_code_tags(crawl_run / "00_ingest" / "artifacts" / "code_tags", 0, ["no-such-id"])
    assert tags.empty and {"has_html", "code_chars"} <= set(tags.columns)
    code = "Read it:\n" + "\n".join(f"def load_{i}(path):\n    with open(path) as fh:\n        return fh.read()" for i in range(4))
    df = pd.DataFrame({"doc_id": ["no-such-id", "prose"], "text": [code, "A quiet walk by the river."], "source": "web", "meta": None})
    s = score_frame(df, CodeWebConfig(), "whitespace", tags=tags, load=lambda ids: {})
    assert s["has_html"].tolist() == [False, False] and not s["html_parsed"].any()
    assert CodeWebConfig().recalled(s).tolist() == ["classifier", None]
