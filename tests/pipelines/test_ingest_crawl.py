"""`curate ingest` from the crawl: WARC responses, HTML files and HTML fields → documents, ledger, HTML artifact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from pipelines.cli import main as curate
from tests.helpers import only, read_parts

SAMPLE_WARC = Path(__file__).resolve().parents[2] / "sample_data" / "crawl" / "crawl.warc.gz"
ARTICLE = "<html><body><nav><a href='/'>Home</a> <a href='/x'>Shop</a></nav><article><h1>Tides</h1><p>{}</p></article><footer>© Site</footer></body></html>"
BODY = " ".join(f"The tide table for day {i} lists two high waters and two low waters at the harbour." for i in range(12))


def ingest(inputs: list[Path], out: Path, *overrides: str) -> int:
    return curate(["ingest", "--input", *map(str, inputs), "--output", str(out), "--scheduler", "synchronous", "--quiet",
                   "--cache-dir", str(out.parent / ".cache"), "tokenizer=whitespace", *overrides])


@pytest.fixture(scope="module")
def warc_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SAMPLE_WARC.exists():
        pytest.skip("sample_data/crawl is not generated (python sample_data/generate.py)")
    root = tmp_path_factory.mktemp("crawl")
    assert ingest([SAMPLE_WARC], root / "ing") == 0
    return root / "ing"


def test_every_response_is_kept_or_ledgered_with_its_reason(warc_run: Path) -> None:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    responses = sum(1 for _ in ArchiveIterator(str(SAMPLE_WARC), record_types=WarcRecordType.response, fsspec_args=False))
    kept, ledger = read_parts(warc_run / "docs"), read_parts(warc_run / "ledger")
    assert len(kept) + len(ledger) == responses
    assert set(ledger["reason"]) == {"http_status", "binary_content", "truncated_input", "extraction_empty", "duplicate_url"}
    dup = json.loads(ledger.loc[ledger["reason"] == "duplicate_url", "detail"].iloc[0])
    assert dup["duplicate_of"] in set(kept["doc_id"]) and dup["url"].startswith("http://")
    assert set(kept["source"]) == {"web"} and kept["text"].str.len().min() > 100


def test_pages_carry_url_columns_but_no_html(warc_run: Path) -> None:
    kept = read_parts(warc_run / "docs")
    assert kept["url_normalized"].notna().all() and "notes.example.cn" in set(kept["url_domain"])
    assert not kept["text"].str.contains("<html", regex=False).any()
    assert not kept["meta"].str.contains('"html"', regex=False).any()
    zh = kept[kept["url_domain"] == "notes.example.cn"]
    assert len(zh) == 6 and zh["text"].str.contains("入门笔记").all()  # GBK pages decoded from their <meta charset>
    assert kept["text"].str.contains("\n    ", regex=False).any()  # code indentation survives extraction


def test_crawled_pages_get_the_language_of_their_extracted_text(warc_run: Path) -> None:
    kept = read_parts(warc_run / "docs")
    zh = kept[kept["url_domain"] == "notes.example.cn"]
    assert (zh["lang"] == "zh").all() and (zh["lang_score"] > 0.5).all()
    others = kept[kept["url_domain"] != "notes.example.cn"]
    assert (others["lang"] == "en").mean() > 0.9


def test_html_artifact_is_keyed_by_doc_id(warc_run: Path) -> None:
    html = read_parts(warc_run / "artifacts" / "html")
    kept = read_parts(warc_run / "docs")
    assert set(kept["doc_id"]) <= set(html["doc_id"]) and html["html"].str.contains("<html").all()


def test_another_extractor_reuses_the_parsed_crawl(warc_run: Path) -> None:
    out = warc_run.parent / "ing_resiliparse"
    assert ingest([SAMPLE_WARC], out, "extractor=resiliparse") == 0
    cache = warc_run.parent / ".cache" / "ingest"
    assert len(list(cache.glob("parsed-*"))) == 1 and len(list(cache.glob("extracted-*"))) == 2
    a = read_parts(warc_run / "docs").set_index("doc_id")["text"]
    b = read_parts(out / "docs").set_index("doc_id")["text"]
    assert set(a.index) == set(b.index) and (a != b.loc[a.index]).any()


def test_html_fields_and_files_are_extracted(tmp_path: Path) -> None:
    rows = [{"id": "only-html", "html": ARTICLE.format(BODY), "url": "https://t.example/a"},
            {"id": "both", "text": "Given text wins.", "html": ARTICLE.format(BODY), "url": "https://t.example/b"},
            {"id": "again", "html": ARTICLE.format(BODY + " Updated."), "url": "http://www.t.example/a#top"}]
    (tmp_path / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame([{"page": ARTICLE.format(BODY.replace("tide", "wave")), "url": "https://p.example/"}]).to_parquet(tmp_path / "pages.parquet")
    (tmp_path / "page.html").write_text(ARTICLE.format(BODY.replace("harbour", "pier")))
    out = tmp_path / "ing"
    assert ingest([tmp_path / "pages.jsonl", tmp_path / "page.html"], out, "source=web") == 0
    kept = read_parts(out / "docs").set_index("doc_id")
    ledger = read_parts(out / "ledger").set_index("doc_id")
    assert "high waters" in kept.loc["only-html", "text"] and "Shop" not in kept.loc["only-html", "text"]
    assert kept.loc["both", "text"] == "Given text wins."
    assert ledger.loc["again", "reason"] == "duplicate_url" and json.loads(ledger.loc["again", "detail"])["duplicate_of"] == "only-html"
    assert kept["text"].str.contains("pier").sum() == 1  # the .html file
    html = read_parts(out / "artifacts" / "html").set_index("doc_id")
    assert {"only-html", "both"} <= set(html.index)
    out2 = tmp_path / "ing2"
    assert ingest([tmp_path / "pages.parquet"], out2, "source=web", "fields={html: page}") == 0
    assert read_parts(out2 / "docs")["text"].str.contains("The wave table for day 3").all()


def test_not_a_warc_fails_before_output(tmp_path: Path) -> None:
    bad = tmp_path / "x.warc"
    bad.write_text("hello")
    assert ingest([bad], tmp_path / "out") != 0
    assert not (tmp_path / "out" / "_SUCCESS").exists()


def test_shards_never_carry_html_by_default(warc_run: Path) -> None:
    """The HTML lives in artifacts/html; the docs parts (what later stages and shards read) have no html column."""
    schema = pq.read_schema(sorted((warc_run / "docs").glob("part-*.parquet"))[0])
    assert "html" not in schema.names and "_html" not in schema.names
    shutil.rmtree(warc_run.parent / "ing_resiliparse", ignore_errors=True)


def test_code_web_finds_each_page_html_whatever_the_partition(warc_run: Path) -> None:
    from pipelines.stages.code_web_pages import load_pages

    html_dir = warc_run / "artifacts" / "html"
    ids = read_parts(html_dir)["doc_id"].tolist()
    pages = load_pages(str(html_dir), 7, ids[:3] + ["no-such-id"])  # part 7 does not exist: every part is searched
    assert set(pages) == set(ids[:3]) and all("<html" in h for h in pages.values())
    assert load_pages(None, 0, ids) == {}


@pytest.mark.slow
def test_books_papers_social_reach_their_own_mixture_groups(tmp_path: Path) -> None:
    """The new sources are schema sources (not unknown_source) and the recipe mixes each as a group of its own."""
    para = "Chapter {i}. The keeper of the lighthouse wrote every evening about the weather, the ships and the gulls. "
    rows = [{"id": f"{s}{i}", "source": s, "text": (para.format(i=i) + s + " ") * 20} for s in ("books", "papers", "social") for i in range(3)]
    rows.append({"id": "w0", "source": "web", "text": "A plain web page about tide tables and harbour times. " * 30})
    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc = curate(["run", "pipelines/configs/glm45.yaml", "--input", str(data), "--output", str(tmp_path / "run"), "--scheduler",
                 "synchronous", "--quiet", "ingest.tokenizer=whitespace", "mixture.tokenizer=whitespace", *only("exact_dedup", "mixture")])
    assert rc == 0
    assert not (tmp_path / "run" / "00_ingest" / "ledger").exists() or read_parts(tmp_path / "run" / "00_ingest" / "ledger").empty
    phase1 = json.loads((tmp_path / "run" / "80_mixture" / "manifests" / "pretrain_phase1.json").read_text())
    groups = {g["name"]: g for g in phase1["groups"]}
    assert {"books/all", "papers/all", "social/all"} <= set(groups)
    assert all(groups[g]["unique_documents"] == 3 for g in ("books/all", "papers/all", "social/all"))


@pytest.mark.slow
def test_a_run_starts_from_the_crawl(tmp_path: Path) -> None:
    """`curate run` on the sample WARC alone writes the five manifests (model stages off to keep it short)."""
    if not SAMPLE_WARC.exists():
        pytest.skip("sample_data/crawl is not generated")
    from curation.mixture.manifest_check import validate_manifest

    out = tmp_path / "run"
    rc = curate(["run", "pipelines/configs/glm45.yaml", "--input", str(SAMPLE_WARC), "--output", str(out), "--scheduler",
                 "synchronous", "--quiet", "semdedup.enabled=false", "edu_score.enabled=false"])
    assert rc == 0
    manifests = sorted((out / "80_mixture" / "manifests").glob("*.json"))
    assert len(manifests) == 5 and all(validate_manifest(m) == [] for m in manifests)
    phase1 = json.loads((out / "80_mixture" / "manifests" / "pretrain_phase1.json").read_text())
    assert any(g["name"].startswith("web/") and g["unique_documents"] > 0 for g in phase1["groups"])
    assert set(read_parts(out / "00_ingest" / "ledger")["reason"]) >= {"http_status", "binary_content", "duplicate_url"}
