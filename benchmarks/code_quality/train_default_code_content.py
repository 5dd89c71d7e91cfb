"""Train the shipped default code-content model from the real corpora in ../shared/data.

    python benchmarks/code_quality/train_default_code_content.py [--output classifiers/models/code_content]

Positives: source files of programming languages (code/code_files.parquet). Negatives: prose —
web pages without HTML code blocks (main-content text), arXiv abstracts and OpenStax modules.
The input is assembled under benchmarks/_work/ (git-ignored); only the weights ship.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data"
sys.path.insert(0, str(ROOT))


DATA_SOURCES = (
    "positives: ../shared/data/code/code_files.parquet (CPython stdlib, PyPI, Debian, Rust crates, Go modules, npm; "
    "per-file licences); negatives: ../shared/data/web/web_docs.parquet pages without HTML code blocks, "
    "math/arxiv_abstracts and math/openstax_modules; split by repository / URL host"
)


def build_input(work: Path) -> Path:
    code = pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["text", "path", "language", "repo"])
    code = code.assign(source="code", url=None, meta=None)
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["text", "url", "html"])
    web = web[web["text"].str.len() > 200]
    web = web.assign(source="web", path=None, language=None, repo=None,
                     meta=[json.dumps({"html": h}) if isinstance(h, str) and h else None for h in web["html"]])
    math = pd.concat([pd.read_json(DATA / "math" / f, lines=True) for f in ("arxiv_abstracts.jsonl.gz", "openstax_modules.jsonl.gz")],
                     ignore_index=True)
    math = pd.DataFrame({"text": math["text"], "source": "math_science", "url": math.get("url"), "path": None,
                         "language": None, "repo": None, "meta": None})
    cols = ["text", "source", "path", "language", "repo", "url", "meta"]
    frame = pd.concat([code[cols], web[cols], math[cols]], ignore_index=True)
    work.mkdir(parents=True, exist_ok=True)
    out = work / "code_content_train.parquet"
    frame.to_parquet(out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", default=str(ROOT / "classifiers" / "models" / "code_content"))
    args = parser.parse_args()
    from pipelines.cli import main as curate

    os.environ["CURATE_WRITE_SHIPPED_MODELS"] = "1"  # this script rebuilds the shipped model: the guard lets it

    path = build_input(ROOT / "benchmarks" / "_work" / "code_content")
    rc = curate(["train-classifier", "code-content", "--input", str(path), "--output", args.output,
                 "--max-docs", "6000", "--window-lines", "4", "--model-version", "2-shared-data"])
    if rc == 0:
        add_provenance(Path(args.output) / "model.json")
    return rc


def add_provenance(card_path: Path) -> None:
    """Name the corpora the shipped weights come from (the weights only ship, never the data)."""
    card = json.loads(card_path.read_text())
    card["data_sources"] = DATA_SOURCES
    card["trained_by"] = "python benchmarks/code_quality/train_default_code_content.py"
    card_path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
