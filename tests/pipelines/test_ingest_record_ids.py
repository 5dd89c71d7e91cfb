"""Two crawl records of one WARC-Record-ID: the first is kept with its own text (duplicate_id keeps
the first occurrence), the second is a ledger row."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipelines.cli import main as curate
from tests.curation.test_warc import PAGE, write_warc


def test_the_first_of_two_records_with_one_id_keeps_its_own_text(tmp_path: Path) -> None:
    same = {"WARC-Record-ID": "<urn:uuid:11111111-2222-3333-4444-555555555555>"}
    html = [("Content-Type", "text/html; charset=utf-8")]
    write_warc(tmp_path / "c.warc.gz", [
        {"url": "http://a.example/first", "body": PAGE.format("first page about water pipes and chlorine " * 20).encode(), "http": html, "warc": same},
        {"url": "http://a.example/second", "body": PAGE.format("second page about bridges and steel " * 20).encode(), "http": html, "warc": same},
    ])
    out = tmp_path / "out"
    assert curate(["ingest", "--input", str(tmp_path / "c.warc.gz"), "--output", str(out), "--scheduler", "synchronous", "--quiet"]) == 0
    docs, ledger = pd.read_parquet(out / "docs"), pd.read_parquet(out / "ledger")
    assert docs["url"].tolist() == ["http://a.example/first"]
    assert "first page" in docs["text"].iloc[0] and "second page" not in docs["text"].iloc[0]
    assert ledger["reason"].tolist() == ["duplicate_id"]
    pages = pd.read_parquet(out / "artifacts" / "html")
    assert len(pages) == 1 and "first page" in pages["html"].iloc[0]  # what code_web reads by id
