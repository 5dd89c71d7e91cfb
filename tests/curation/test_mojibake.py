"""Mojibake repair at ingest (curation/ingest/mojibake.py): text whose UTF-8 was read as Windows-1252
or Latin-1 upstream is put back before dedup, in records with text and in the text extracted from a
crawl's pages; code is left as it is; ``ingest.fix_mojibake=false`` turns it off; stats.json counts
the repairs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from curation.ingest.mojibake import FLAG, flagged, repair, repair_texts
from pipelines.cli import main
from tests.curation.test_warc import PAGE, write_warc
from tests.helpers import read_parts

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
CLEAN = "He said “hello” and don’t worry — the café’s menu is fine… Paweł agreed."


def garble(text: str) -> str:
    """``text`` as a reader that took its UTF-8 for Windows-1252 shows it (a byte Windows-1252 leaves
    undefined, 0x9D of ``”``, as its Latin-1 character, as browsers do)."""
    return "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in text.encode("utf-8"))


def test_repair_undoes_both_kinds_and_leaves_real_text() -> None:
    assert garble(CLEAN) != CLEAN and flagged(garble(CLEAN))
    assert repair(garble(CLEAN)) == CLEAN
    c1 = CLEAN.encode("cp1252", errors="ignore").decode("latin-1")  # Windows-1252 quotes left as C1 controls
    assert "\x93" in c1 and repair(c1) == CLEAN.replace("ł", "")
    for fine in ("plain ascii", CLEAN, "NÃO É POSSÍVEL", "Ça coûte 5 € à Zürich", "中文页面的正文", "Ærø"):
        assert repair(fine) == fine, fine
    ascii_text = "x" * 100
    assert repair(ascii_text) is ascii_text  # the ASCII fast path hands the same object back


def test_code_is_left_as_it_is() -> None:
    code = "s = 'donâ€™t'  # what a Windows-1252 reader shows\n"
    out, changed = repair_texts([code, garble(CLEAN)], ["code", "math_science"])
    assert out == [code, CLEAN] and changed == [False, True]


def run_ingest(inputs: list[Path], out: Path, *extra: str) -> tuple[pd.DataFrame, dict]:
    assert (
        main(["ingest", *[a for p in inputs for a in ("--input", str(p))], "--output", str(out), "--quiet", *extra])
        == 0
    )
    return read_parts(out / "docs"), json.loads((out / "stats.json").read_text())


@pytest.fixture()
def inputs(tmp_path: Path) -> list[Path]:
    rows = [
        {"id": "garbled", "text": garble(CLEAN), "source": "web"},
        {"id": "clean", "text": CLEAN, "source": "web"},
        {"id": "code", "text": "s = 'donâ€™t'\nprint(s)\n", "source": "code", "path": "a.py"},
    ]
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    # a page that declares UTF-8 and holds text an earlier tool had already garbled
    page = PAGE.format((garble(CLEAN) + " ") * 8).encode("utf-8")
    warc = tmp_path / "pages.warc.gz"
    write_warc(
        warc, [{"url": "https://a.example/p", "body": page, "http": [("Content-Type", "text/html; charset=utf-8")]}]
    )
    return [jsonl, warc]


def test_ingest_repairs_records_and_extracted_pages(inputs: list[Path], tmp_path: Path) -> None:
    docs, stats = run_ingest(inputs, tmp_path / "on")
    text = dict(zip(docs["doc_id"], docs["text"], strict=True))
    assert text["garbled"] == CLEAN and text["clean"] == CLEAN and text["code"] == "s = 'donâ€™t'\nprint(s)\n"
    page = (
        docs.loc[docs["source"] == "web"].loc[lambda d: d["url"].fillna("").str.startswith("https://"), "text"].iloc[0]
    )
    assert page.count(CLEAN) == 8 and "â€" not in page
    extra = stats["extra"]
    assert extra["mojibake_repaired"]["documents"] == 1 and extra["mojibake_repaired_pages"] == 1
    # the repaired copy is an exact duplicate of the clean one
    assert main(["exact-dedup", "--input", str(tmp_path / "on"), "--output", str(tmp_path / "ex"), "--quiet"]) == 0
    ledger = read_parts(tmp_path / "ex" / "ledger")
    assert (ledger["reason"] == "exact_duplicate").sum() == 1


def test_fix_mojibake_false_keeps_the_text(inputs: list[Path], tmp_path: Path) -> None:
    docs, stats = run_ingest(inputs, tmp_path / "off", "ingest.fix_mojibake=false")
    assert dict(zip(docs["doc_id"], docs["text"], strict=True))["garbled"] == garble(CLEAN)
    assert "mojibake_repaired" not in stats["extra"] and stats["extra"]["mojibake_repaired_pages"] == 0


def test_real_web_texts() -> None:
    """On the real web texts, every repair removes what the test flags and keeps the text's length
    within a few characters per repair; texts of other languages are not touched."""
    web = DATA / "web" / "web_docs.parquet"
    if not web.exists():
        pytest.skip(f"{web} is absent (set CURATION_SHARED_DATA)")
    texts = pd.read_parquet(web, columns=["text"])["text"].dropna().tolist()
    out, changed = repair_texts(texts, ["web"] * len(texts))
    fixed = [(a, b) for a, b, c in zip(texts, out, changed, strict=True) if c]
    assert 10 <= len(fixed) <= 60, len(fixed)  # about 1 % of real web text
    for before, after in fixed:
        assert len(after) <= len(before) and len(FLAG.findall(after)) < len(FLAG.findall(before))
    zh = DATA / "zh" / "zh_reviews.jsonl.gz"
    if zh.exists():
        reviews = pd.read_json(zh, lines=True)["text"].astype(str).tolist()[:20000]
        assert repair_texts(reviews, ["web"] * len(reviews))[1].count(True) == 0


def test_a_repair_that_would_damage_the_text_is_not_made() -> None:
    # a text that quotes mojibake beside what it stands for keeps its meaning
    quoted = 'I lost count of how many times I saw "Ã¤" instead of "ä" on that page.'
    assert repair(quoted) == quoted
    # GBK read as Latin-1 (a real page title): the fixer cannot put it back, only into other garbage
    gbk = "»°¾ç¡¶Ô¼¶¨ÎÞÆÚÏÞ¡·ºÓ±±¸÷ÊÐÑ²ÑÝ½áÊø"
    assert flagged(gbk) and repair(gbk) == gbk
    # a long line is repaired in pieces: mojibake far from a quotation is still repaired
    line = ("Plain words of a long line. " * 200) + garble(CLEAN) + (" More plain words." * 200)
    assert "\n" not in line and repair(line) == line.replace(garble(CLEAN), CLEAN)
