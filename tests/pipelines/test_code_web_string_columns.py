"""code_web's score step takes its columns as lists (``Series.tolist``, no Arrow scalar per value):
the same scores whether the documents come as Arrow string columns (as Dask and pandas 3 read
them) or as object columns (the reference: iterating those gives plain values), missing values
included; the HTML comes back as plain strings."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipelines.stages.code_web import CodeWebConfig, score_frame
from pipelines.stages.code_web_pages import load_code_tags, load_pages
from tests.helpers import read_parts
from tests.pipelines.test_code_web_one_parse import crawl_run  # noqa: F401  (the module's run fixture)

STRINGS = ["doc_id", "source", "text", "meta"]


@pytest.mark.parametrize("dtype", [pd.StringDtype("pyarrow"), "str"])
def test_arrow_string_documents_score_as_object_ones(crawl_run: Path, dtype) -> None:  # noqa: F811
    docs = read_parts(crawl_run / "00_ingest" / "docs")[STRINGS].reset_index(drop=True)
    docs.loc[1, "text"] = None  # a missing text scores as an empty one
    docs.loc[2, "meta"] = None
    ids = docs["doc_id"].tolist()
    tags = load_code_tags(crawl_run / "00_ingest" / "artifacts" / "code_tags", 0, ids)

    def load(wanted: list[str]) -> dict[str, str]:
        return load_pages(crawl_run / "00_ingest" / "artifacts" / "html", 0, wanted)

    cfg = CodeWebConfig()
    ref = score_frame(docs.astype(object), cfg, "whitespace", tags=tags, load=load)
    got = score_frame(docs.astype({c: dtype for c in STRINGS}), cfg, "whitespace", tags=tags, load=load)
    pd.testing.assert_frame_equal(got, ref)
    assert ref["html_parsed"].any()  # pages were re-parsed: the check is not vacuous
    assert all(isinstance(h, str) for h in load(ids).values())
