"""A natural-language ``language`` field (the shared Chinese corpora's ``zh``, FineWeb-2's ``cmn_Hani``)
does not fill the ``language`` column, which is the programming language of code: on a document whose
source is not code it is kept in ``meta`` under the field's name, and ingest says so once."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest.language_field import natural_language
from pipelines.cli import main
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl

ROWS = [
    {"id": "w-zh", "text": "这是一个关于数据库索引的教程，索引可以加快查询。", "source": "web", "language": "zh"},
    {"id": "w-cmn", "text": "这是一个关于网络协议的笔记，讲解了连接的建立过程。", "source": "web", "language": "cmn_Hani"},
    {"id": "w-en", "text": "The index speeds up lookups in the table.", "source": "web", "language": "en",
     "meta": {"language": "kept as it was"}},
    {"id": "w-py", "text": "A tutorial page about list comprehensions in Python.", "source": "web", "language": "Python"},
    {"id": "w-none", "text": "A page whose record has no language field.", "source": "web"},
    {"id": "c-py", "text": "def f(x):\n    return x + 1\n", "source": "code", "language": "Python", "path": "f.py"},
    {"id": "c-sh", "text": "#!/bin/sh\necho hi\n", "source": "code", "language": "sh", "path": "hi.sh"},
]


def test_a_natural_language_field_goes_to_meta_on_a_cluster_and_the_run_verifies(tmp_path: Path, caplog) -> None:
    f = _write_jsonl(tmp_path / "mixed.jsonl", ROWS)
    out = tmp_path / "ingest"
    with caplog.at_level(logging.WARNING):
        assert main(["ingest", "--input", str(f), "--output", str(out), "--workers", "1", "--quiet",
                     "ingest.tokenizer=whitespace"]) == 0
    docs = read_parts(out / "docs").set_index("doc_id")
    assert {i: v if isinstance(v, str) else None for i, v in docs["language"].items()} == {"w-zh": None, "w-cmn": None, "w-en": None, "w-py": "Python", "w-none": None,
                                          "c-py": "Python", "c-sh": "sh"}
    meta = {i: json.loads(m) if isinstance(m, str) else None for i, m in docs["meta"].items()}
    assert meta["w-zh"] == {"language": "zh"} and meta["w-cmn"] == {"language": "cmn_Hani"}
    assert meta["w-en"] == {"language": "kept as it was", "field.language": "en"}  # never over the record's own meta
    assert meta["w-py"] is None and meta["c-py"] is None and meta["c-sh"] is None
    assert docs.loc["w-zh", "lang"] == "zh" and docs.loc["w-en", "lang"] == "en"  # lang: identified from the text, as ever
    stats = json.loads((out / "stats.json").read_text())
    assert stats["extra"]["language_field_in_meta"] == {"documents": 3, "files": 1, "values": {"cmn_Hani": 1, "en": 1, "zh": 1},
                                                        "examples": {str(f): 3}}
    said = [r.getMessage() for r in caplog.records if "natural-language code in their language field" in r.getMessage()]
    assert len(said) == 1 and "3 records of 1 file(s)" in said[0] and "cmn_Hani=1" in said[0]
    assert main(["verify", str(out)]) == 0


def test_a_fineweb2_parquet_language_column_and_a_renamed_field(tmp_path: Path) -> None:
    f = tmp_path / "fw2.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["第一段中文文本，讲解索引。", "Второй текст о базах данных."],
                             "language": ["cmn_Hani", "rus_Cyrl"], "lang_code": ["zh-CN", "ru"]}), f)
    _ingest([f], tmp_path / "out", ["ingest.source=web", "ingest.fields.language=lang_code"])
    docs = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert docs["language"].isna().all()
    assert [json.loads(m) for m in docs["meta"]] == [{"language": "cmn_Hani", "lang_code": "zh-CN"},
                                                     {"language": "rus_Cyrl", "lang_code": "ru"}]


def test_an_unchanged_run_says_nothing_and_records_nothing(tmp_path: Path) -> None:
    f = _write_jsonl(tmp_path / "code.jsonl", [r for r in ROWS if r["source"] == "code" or r["id"] in ("w-py", "w-none")])
    _ingest([f], tmp_path / "out")
    assert "language_field_in_meta" not in json.loads((tmp_path / "out" / "stats.json").read_text())["extra"]
    docs = read_parts(tmp_path / "out" / "docs")
    assert pd.isna(docs.set_index("doc_id").loc["w-none", "language"])


@pytest.mark.parametrize(("value", "natural"), [
    ("zh", True), ("zh-CN", True), ("zh_Hans", True), ("zh-hans", True), ("en-US", True), ("eng", True), ("cmn", True),
    ("zho", True), ("cmn_Hani", True), ("quz_Latn", True), ("pt-BR", True), ("es-419", True), ("und", True),
    ("Python", False), ("C++", False), ("Go", False), ("Io", False), ("ts", False), ("asm", False), ("cpp", False),
    ("lua", False), ("JSON", False), ("", False), (None, False), (3, False),
])
def test_what_counts_as_a_natural_language_code(value, natural) -> None:
    assert natural_language(value) is natural
