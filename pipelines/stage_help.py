"""``curate <stage> --help``: what the stage does, what it reads, and the keys it takes (every stage's
help was the same list of options, with no word of the stage or its keys)."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

from pipelines.cli_words import plain


def stage_help(name: str) -> tuple[str, str]:
    """(description, epilog) of stage ``name``'s command: its module's first paragraph, its input,
    and each config key with its default (``key=value`` on the command line)."""
    from pipelines.stages import load_stage

    stage = load_stage(name)
    doc = plain(inspect.cleandoc(sys.modules[type(stage).__module__].__doc__ or "").split("\n\n")[0])
    reads = "raw files (JSON Lines, Parquet, WARC/WET, HTML)" if name == "ingest" else "a stage folder (the previous stage's output)"
    keys = ", ".join(f"{k}={_short(v)}" for k, v in stage.config_cls().flat_dict().items())
    page = f"docs/{name}.md" if (Path(__file__).resolve().parents[1] / "docs" / f"{name}.md").is_file() else "README.md, Stages"
    epilog = (f"input: {reads}. keys (key=value, or {name}.key=value; the recipe's stages.{name} section): {keys}. "
              f"More: {page}; `curate {name.replace('_', '-')} … --dry-run` prints the whole config.")
    return doc, epilog


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
