"""Records that repeat an id, whatever their other faults: each page is extracted from its own
HTML (never from an earlier record of the same id), the first occurrence keeps the id, and every
later copy is a ledger row of its own id (``<id>@<file>:<line>``), with the reason it already had
or ``duplicate_id``: ids stay unique across documents and ledger (what ``verify`` checks)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.cli import main as curate
from tests.curation.test_warc_damaged import page, rec, write
from tests.helpers import read_parts

EMPTY = b"<html><body><script>var a = 1;</script></body></html>"


def ingest(inputs: list[Path], out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    assert curate(["ingest", "--input", *map(str, inputs), "--output", str(out), "--scheduler", "synchronous", "--quiet",
                   "--cache-dir", str(out.parent / ".cache"), "tokenizer=whitespace"]) == 0
    return read_parts(out / "docs"), read_parts(out / "ledger")


def with_id(record: bytes, uuid: str) -> bytes:
    head, _, rest = record.partition(b"WARC-Record-ID: <urn:uuid:")
    return head + f"WARC-Record-ID: <urn:uuid:{uuid}".encode() + rest.partition(b">")[1] + rest.partition(b">")[2]


def _check_unique(docs: pd.DataFrame, ledger: pd.DataFrame) -> None:
    ids = [*docs["doc_id"], *ledger["doc_id"]]
    assert len(ids) == len(set(ids)), ids


def test_each_copy_of_a_warc_record_id_is_kept_or_ledgered_under_its_own_id(tmp_path: Path) -> None:
    x, y = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
    bad = rec("b", b"gone").replace(b"200 OK", b"404 NF")  # as long: Content-Length holds
    f = write(tmp_path / "d.warc.gz", [with_id(rec("a", page("alpha")), x), with_id(bad, x),  # good, then a 404 copy
                                       with_id(rec("c", EMPTY), y), with_id(rec("d", page("delta")), y),  # empty, then a good copy
                                       rec("e", page("echo"))])
    docs, ledger = ingest([f], tmp_path / "out")
    _check_unique(docs, ledger)
    assert sorted(docs["url"]) == ["http://a.example/a", "http://a.example/e"]
    assert "alpha" in docs.set_index("url").loc["http://a.example/a", "text"]
    rows = {json.loads(d)["line"]: (r, i) for d, r, i in zip(ledger["detail"], ledger["reason"], ledger["doc_id"], strict=True)}
    assert rows == {2: ("http_status", f"{x}@d.warc.gz:2"), 3: ("extraction_empty", y), 4: ("duplicate_id", f"{y}@d.warc.gz:4")}


def test_a_jsonl_html_record_is_extracted_from_its_own_page(tmp_path: Path) -> None:
    lines = [{"id": "p", "html": EMPTY.decode(), "source": "web"}, {"id": "p", "html": page("second").decode(), "source": "web"},
             {"id": "q", "text": "", "source": "web"}, {"id": "q", "html": page("third").decode(), "source": "web"},
             {"id": "r", "html": page("fourth").decode(), "source": "web"}]
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    docs, ledger = ingest([f], tmp_path / "out")
    _check_unique(docs, ledger)
    assert docs["doc_id"].tolist() == ["r"] and "fourth" in docs["text"].iloc[0]
    assert sorted(zip(ledger["doc_id"], ledger["reason"], strict=True)) == [
        ("p", "extraction_empty"), ("p@in.jsonl:2", "duplicate_id"), ("q", "empty_text"), ("q@in.jsonl:4", "duplicate_id")]
    pages = read_parts(tmp_path / "out" / "artifacts" / "html")
    assert "fourth" in pages.set_index("doc_id").loc["r", "html"] and "second" not in "".join(pages["html"])
