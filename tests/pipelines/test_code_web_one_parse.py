"""One parse per page: ingest reads the code tags from the tree its extractor parsed; code_web
parses only the pages it recalls, and recalls the same pages as a parse of every page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from curation.quality.html_code import code_tag_stats, parse
from pipelines.cli import main as curate
from pipelines.stages.code_web import CodeWebConfig, score_frame
from pipelines.stages.code_web_pages import load_code_tags, load_pages
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
    assert stats["html_parsed_pages"] <= recalled < len(kept) // 2  # no page it does not recall is parsed
    scores = read_parts(one / "artifacts" / "scores").set_index("doc_id")
    assert not scores.loc[kept.index[kept["code_web_recall"].isna()], "html_parsed"].any()
    # each recalled page with HTML is re-parsed once: here, or rendered by ingest from the parse that counted its tags
    rendered = set(read_parts(crawl_run / "00_ingest" / "artifacts" / "code_text")["doc_id"])
    parsed_here = set(scores.index[scores["html_parsed"]])
    rec = kept.index[kept["code_web_recall"].notna()]
    assert len(rendered) >= 3 and not parsed_here & rendered
    assert set(rec[scores.loc[rec, "has_html"].to_numpy()]) <= parsed_here | rendered

    # the peer: the same scoring with a parse of every page with HTML (no ingest code tags)
    docs = read_parts(crawl_run / "00_ingest" / "docs")
    cfg = CodeWebConfig()
    pages = load_pages(crawl_run / "00_ingest" / "artifacts" / "html", 0, docs["doc_id"].tolist())
    peer = score_frame(docs, cfg, "whitespace", pages).set_index("doc_id").sort_index()
    assert peer["html_parsed"].sum() == len(pages) == len(docs)
    scores = scores.sort_index()
    cols = ["has_html", "pre_blocks", "code_elements", "highlighted", "code_chars", "content_prob", "content_code_chars",
            "content_code_lines", "reparsed", "score", "n_tokens"]
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


def test_html_in_small_row_groups_gives_code_web_the_same_scores(crawl_run: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest writes the HTML in row groups of at most HTML_GROUP_CHARS characters; code_web reads
    the recalled pages from them and scores as from a part of one row group."""
    import pyarrow.parquet as pq

    from pipelines.stages import ingest

    monkeypatch.setattr(ingest, "HTML_GROUP_CHARS", 8000)  # the sample's pages are a few kB: several groups
    assert curate(["ingest", "--input", str(SAMPLE_WARC), "--output", str(tmp_path / "00_ingest"), "--scheduler", "synchronous",
                   "--quiet", "--cache-dir", str(tmp_path / ".cache"), "tokenizer=whitespace"]) == 0
    part = tmp_path / "00_ingest" / "artifacts" / "html" / "part-00000.parquet"
    pf = pq.ParquetFile(part)
    assert pf.num_row_groups > 3
    for g in range(pf.num_row_groups):
        sizes = [len(h) for h in pf.read_row_group(g, columns=["html"]).column(0).to_pylist()]
        assert sum(sizes) <= 8000 or len(sizes) == 1
    assert pf.read().to_pandas().equals(read_parts(crawl_run / "00_ingest" / "artifacts" / "html"))  # same rows, same order
    # without the texts ingest rendered, code_web parses the recalled pages from those row groups
    from pipelines.stages.code_web import CodeWebStage

    without = {k: v for k, v in CodeWebStage.requires_artifacts.items() if k != "code_text"}
    monkeypatch.setattr(CodeWebStage, "requires_artifacts", without)
    run_one("code_web", tmp_path / "00_ingest", tmp_path / "60_code_web", ["ingest.tokenizer=whitespace"])
    small = read_parts(tmp_path / "60_code_web" / "artifacts" / "scores")
    assert small["html_parsed"].sum() >= 3
    pd.testing.assert_frame_equal(small.drop(columns="html_parsed"),
                                  read_parts(crawl_run / "60_code_web" / "artifacts" / "scores").drop(columns="html_parsed"))
    same = read_parts(tmp_path / "60_code_web" / "docs"), read_parts(crawl_run / "60_code_web" / "docs")
    pd.testing.assert_frame_equal(*same)  # the documents do not depend on where the re-parsed text came from


def test_code_web_reads_only_the_row_groups_that_hold_its_pages(tmp_path: Path) -> None:
    """The other row groups' data is damaged on disk: reading them would fail, so they are not read."""
    import pyarrow.parquet as pq

    from pipelines.io import write_frame
    from pipelines.stages.code_web_pages import read_ids
    from pipelines.stages.ingest import HTML_SCHEMA

    pages = pd.DataFrame({"doc_id": [f"d{i}" for i in range(6)], "html": [f"<html><pre>x = {i}</pre>{'p' * 3000}</html>" for i in range(6)]})
    path = tmp_path / "part-00000.parquet"
    write_frame(pages, path, schema=HTML_SCHEMA, groups=[0, 2, 4, 6])
    assert load_pages(tmp_path, 0, ["d3", "d2", "zz"]) == {"d2": pages.at[2, "html"], "d3": pages.at[3, "html"]}
    _damage(path, groups=(0, 2), column=1)  # html
    with pytest.raises(OSError):
        pq.read_table(path)
    assert load_pages(tmp_path, 0, ["d3", "d2", "zz"]) == {"d2": pages.at[2, "html"], "d3": pages.at[3, "html"]}
    assert read_ids(path, {"zz"}, ["doc_id", "html"]).empty
    for damaged in ("d0", "d5"):
        with pytest.raises(OSError):
            read_ids(path, {damaged}, ["doc_id", "html"])


def test_code_web_reads_doc_ids_only_in_the_row_groups_whose_statistics_span_its_pages(tmp_path: Path) -> None:
    """The doc_id column of the row groups whose doc_id range holds none of the pages is damaged on
    disk: reading the ids of the whole part would fail, so only the groups that can hold them are read."""
    import pyarrow.parquet as pq

    from pipelines.io import write_frame
    from pipelines.stages.code_web_pages import read_ids
    from pipelines.stages.ingest import HTML_SCHEMA

    pages = pd.DataFrame({"doc_id": [f"d{i}" for i in range(6)], "html": [f"<pre>x = {i}</pre>" for i in range(6)]})
    path = tmp_path / "part-00000.parquet"
    write_frame(pages, path, schema=HTML_SCHEMA, groups=[0, 2, 4, 6])  # ids d0-d1, d2-d3, d4-d5
    _damage(path, groups=(0, 2), column=0)  # doc_id
    with pytest.raises(OSError):
        pq.read_table(path, columns=["doc_id"])
    assert load_pages(tmp_path, 0, ["d3", "d2", "d35", "zz"]) == {"d2": pages.at[2, "html"], "d3": pages.at[3, "html"]}
    assert read_ids(path, {"d25", "zz"}, ["doc_id", "html"]).empty  # d25 is in the range of group 1, not in it
    with pytest.raises(OSError):
        read_ids(path, {"d4"}, ["doc_id", "html"])


def test_rendered_texts_are_read_from_the_part_of_the_same_number_only(tmp_path: Path) -> None:
    """A page without a rendered text is parsed, not looked for in every other part: ``own_part``
    reads one file; the HTML lookup still searches the other parts for an id it does not find."""
    from pipelines.io import write_frame
    from pipelines.stages.ingest_extract import CODE_TEXT_SCHEMA

    for number, ids in enumerate((["a", "b"], ["c"])):
        write_frame(pd.DataFrame({"doc_id": ids, "text": [f"text of {i}" for i in ids]}), tmp_path / f"part-0000{number}.parquet",
                    schema=CODE_TEXT_SCHEMA)
    assert load_pages(tmp_path, 0, ["a", "c"], column="text", own_part=True) == {"a": "text of a"}
    assert load_pages(tmp_path, 0, ["a", "c"], column="text") == {"a": "text of a", "c": "text of c"}


def _damage(path: Path, groups: tuple[int, ...], column: int) -> None:
    """Overwrite the pages of one column in some row groups of a Parquet file: reading them fails."""
    import pyarrow.parquet as pq

    meta, data = pq.ParquetFile(path).metadata, bytearray(path.read_bytes())
    for g in groups:
        col = meta.row_group(g).column(column)
        start = col.dictionary_page_offset or col.data_page_offset
        data[start : start + col.total_compressed_size] = b"\xff" * col.total_compressed_size
    path.write_bytes(bytes(data))
