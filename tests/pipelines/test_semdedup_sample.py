"""End to end on the project's sample data: ingest, then semdedup finds the template pages."""

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.cli import main
from tests.helpers import assert_conservation

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "web"


@pytest.mark.slow
def test_sample_web_template_pages_are_found(tmp_path):
    files = sorted(SAMPLE.glob("*.jsonl*"))
    if not files:
        pytest.skip(f"no generated sample data in {SAMPLE} (run the sample_data generator first)")
    ingest = tmp_path / "00_ingest"
    out = tmp_path / "30_semdedup"
    assert main(["ingest", "--input", *map(str, files), "--output", str(ingest), "--scheduler", "synchronous", "--quiet"]) == 0
    assert main(["semdedup", "--input", str(ingest), "--output", str(out), "--scheduler", "synchronous", "--quiet",
                 "--profile", "gpu", "model=minilm-static"]) == 0  # the recipe as written, the English static embedder
    kept, ledger = assert_conservation(ingest, out)
    docs = pd.concat([pd.read_parquet(p) for p in sorted((ingest / "docs").glob("*.parquet"))]).set_index("doc_id")
    kind = docs["meta"].map(lambda m: json.loads(m).get("kind") if isinstance(m, str) else None)
    site = docs["url"].fillna("").str.split("/").str[2]
    # the static model is English-only: Chinese pages (web_zh) are not pruned by it (static_languages)
    assert not removed_ids(out).intersection(docs.index[docs["lang"] == "zh"])
    templates = kind[(kind == "template") & (docs["lang"] == "en")].index
    if len(templates) < 6:
        pytest.skip("this sample data has no template pages")
    removed = ledger.set_index("doc_id")
    keeper = removed["detail"].map(lambda d: json.loads(d)["duplicate_of"])
    # all but about one page per template site is removed, each as a copy of a page of its own site
    sites = site[templates].nunique()
    found = removed.index.intersection(templates)
    assert len(found) >= 0.9 * (len(templates) - sites)
    assert (site[keeper[found]].to_numpy() == site[found].to_numpy()).all()
    # nothing else is removed as a copy of a template page
    others = removed.index.difference(templates)
    assert not keeper[others].isin(templates).any()


def removed_ids(stage_dir):
    return set(pd.concat([pd.read_parquet(p) for p in sorted((stage_dir / "ledger").glob("*.parquet"))])["doc_id"])
