"""``_extract_part`` links a parsed part with no kept page HTML instead of rewriting it: the part it
leaves reads back as the rewritten one (the reference below), with the same code tags and counts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from curation.ingest.mojibake import REPAIRED
from curation.schema import DROP_REASON, DropReason
from pipelines.io import write_frame
from pipelines.kit import Artifact
from pipelines.stages.ingest import STAGE, IngestConfig, _parse_part
from pipelines.stages.ingest_extract import CODE_TAGS_SCHEMA, _extract_part, extract_frame

PAGE = (
    "<html><body><h1>Title</h1><p>"
    + "A paragraph of main content about databases. " * 20
    + "</p><pre><code>x = 1</code></pre></body></html>"
)


def _reference_part(number, parsed, html, out, extractor, tokenizer, max_chars):
    """The extraction step that reads and rewrites every part."""
    df = parsed.read_part(number)
    pages = html.read_part(number)
    pages = pages if pages is not None else pd.DataFrame({"doc_id": [], "html": []})
    before = int((df[DROP_REASON] == DropReason.EXTRACTION_EMPTY.value).sum())
    df, n, tags = extract_frame(df, pages, extractor, tokenizer, max_chars)
    repaired = int(df[REPAIRED].notna().sum()) if REPAIRED in df.columns else 0  # mojibake repaired (not a column of the part)
    out.write_part(number, df.drop(columns=[REPAIRED], errors="ignore"))
    write_frame(tags, Artifact(out.path / "code_tags").part_path(number), schema=CODE_TAGS_SCHEMA)
    empty = int((df[DROP_REASON] == DropReason.EXTRACTION_EMPTY.value).sum()) - before
    return pd.DataFrame({"pages": [n], "empty": [empty], "repaired": [repaired]})


def _parsed(tmp_path: Path, records: list[dict], raw: bytes = b"") -> Artifact:
    src = tmp_path / "in" / "a.jsonl"
    src.parent.mkdir(parents=True)
    src.write_bytes(b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records) + raw)
    cfg = IngestConfig()
    groups = STAGE.plan_inputs([src.parent], cfg)
    out = Artifact(tmp_path / "parsed")
    for n, g in enumerate(groups):
        _parse_part(g, n, cfg, out)
    return out


def _check(tmp_path: Path, records: list[dict], raw: bytes = b"") -> pd.DataFrame:
    parsed = _parsed(tmp_path, records, raw)
    html = Artifact(parsed.path / "html")
    new, ref = Artifact(tmp_path / "new"), Artifact(tmp_path / "ref")
    counts = _extract_part(0, parsed, html, new, "resiliparse_routed", "qwen", 20_000_000)
    ref_counts = _reference_part(0, parsed, html, ref, "resiliparse_routed", "qwen", 20_000_000)
    pd.testing.assert_frame_equal(counts, ref_counts)
    pd.testing.assert_frame_equal(new.read_part(0), ref.read_part(0))
    pd.testing.assert_frame_equal(
        Artifact(new.path / "code_tags").read_part(0), Artifact(ref.path / "code_tags").read_part(0)
    )
    return new.read_part(0)


def test_text_only_part_is_linked_and_reads_as_rewritten(tmp_path):
    records = [
        {"id": "a", "text": "Plain English prose about indexes.", "source": "web", "url": "https://a.com/x"},
        {"id": "b", "text": "这是一个关于数据库索引的教程。😀", "source": "web"},
        {"id": "c", "text": "", "source": "web"},
        {"id": "d", "text": "def f():\n    return 1\n", "source": "code", "language": "python"},
        {"id": "e", "text": "meta page", "source": "web", "meta": {"html": PAGE}},
        {"id": "f", "text": "lone \\ud800", "source": "web"},
        {"id": "h", "text": "x = 1", "source": "code", "repo": "r/s", "path": "a.py", "language": "python", "stars": 3},
    ]
    df = _check(tmp_path, records, raw=b'{"id": "g", "text": "\\ud800"}\n{bad json\n\xff\xfe\n')
    assert df[DROP_REASON].notna().sum() >= 3
    assert (tmp_path / "new" / "part-00000.parquet").stat().st_ino == (
        tmp_path / "parsed" / "part-00000.parquet"
    ).stat().st_ino


def test_part_with_pages_is_extracted_as_before(tmp_path):
    records = [
        {"id": "p", "source": "web", "url": "https://a.com/p", "html": PAGE},
        {"id": "q", "source": "web", "url": "https://a.com/q", "html": "<html><body></body></html>"},
        {"id": "t", "text": "page with its text", "source": "web", "html": PAGE},
        {"id": "u", "text": "no page", "source": "web"},
    ]
    df = _check(tmp_path, records)
    assert df.set_index("doc_id").loc["p", "text"]
    assert df.set_index("doc_id").loc["q", DROP_REASON] == DropReason.EXTRACTION_EMPTY.value


def test_page_with_text_only_is_extracted_as_before(tmp_path):
    _check(tmp_path, [{"id": "t", "text": "page with its text", "source": "web", "html": PAGE}])


def test_empty_part(tmp_path):
    _check(tmp_path, [], raw=b"\n\n")


def test_url_keys_from_the_key_columns_equal_those_from_whole_documents(tmp_path):
    """``build`` reads only ``URL_KEY_READS`` for the URL keys: the same keys as from whole documents."""
    from curation.ingest.duplicate_ids import finish_docs
    from pipelines.stages.ingest import URL_KEY_READS
    from pipelines.stages.ingest_extract import _url_keys

    records = [
        {"id": "a", "text": "one", "source": "web", "url": "https://www.a.com/x?utm_source=z"},
        {"id": "b", "text": "two", "source": "web", "url": "http://a.com/x"},
        {"id": "a", "text": "dup id", "source": "web", "url": "https://b.com/"},
        {"id": "c", "text": "", "source": "web", "url": "https://c.com/"},
        {"id": "d", "text": "code", "source": "code", "url": "https://a.com/x"},
        {"id": "e", "text": "no url", "source": "web"},
    ]
    parsed = _parsed(tmp_path, records, raw=b"{bad\n")
    dup_map = {int(o): ("f", 3) for o in parsed.read_part(0)["_ord"].iloc[[2]]}
    keep = ("_file", "_line")  # the URL keys name each row's file and line
    whole = finish_docs(parsed.read_part(0), dup_map, keep)
    some = finish_docs(parsed.read_part(0, columns=list(URL_KEY_READS)), dup_map, keep)
    assert list(some.columns) == [c for c in whole.columns if c in some.columns]
    pd.testing.assert_frame_equal(_url_keys(some, ("web",)), _url_keys(whole, ("web",)))
    assert _url_keys(whole, ("web",))["url_normalized"].notna().sum() == 2


def test_link_file_replaces_and_falls_back_to_a_copy(tmp_path, monkeypatch):
    from curation import files

    src, dst = tmp_path / "a.parquet", tmp_path / "out" / "b.parquet"
    src.write_bytes(b"new")
    dst.parent.mkdir()
    dst.write_bytes(b"old")
    files.link_file(src, dst)
    assert dst.read_bytes() == b"new" and dst.stat().st_ino == src.stat().st_ino

    def no_link(a, b):
        raise OSError("cross-device link")

    monkeypatch.setattr(files.os, "link", no_link)
    dst.unlink()
    files.link_file(src, dst)
    assert dst.read_bytes() == b"new" and dst.stat().st_ino != src.stat().st_ino
    assert sorted(p.name for p in dst.parent.iterdir()) == ["b.parquet"]  # no temp file left


def test_part_without_has_html_column_is_linked(tmp_path):
    parsed = _parsed(tmp_path, [{"id": "a", "text": "x", "source": "web"}])
    parsed.write_part(0, parsed.read_part(0).drop(columns=["_has_html"]))
    html = Artifact(parsed.path / "html")
    new, ref = Artifact(tmp_path / "new"), Artifact(tmp_path / "ref")
    args = ("resiliparse_routed", "qwen", 20_000_000)
    pd.testing.assert_frame_equal(
        _extract_part(0, parsed, html, new, *args), _reference_part(0, parsed, html, ref, *args)
    )
    pd.testing.assert_frame_equal(new.read_part(0), ref.read_part(0))
