"""The funnel table printed at the end of a run and by ``curate stats``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_run_stats(run_dir: Path) -> list[dict[str, Any]]:
    """stats.json of every finished stage folder of a run, in run order."""
    out = []
    for child in sorted(Path(run_dir).iterdir()):
        stats = child / "stats.json"
        if child.is_dir() and (child / "_SUCCESS").exists() and stats.exists():
            out.append(json.loads(stats.read_text()))
    return out


def _annotated(stats: dict[str, Any]) -> str:
    """A scoring stage removes nothing: show what it annotated (``extra.annotated``: label → documents)."""
    marks = (stats.get("extra") or {}).get("annotated") or {}
    return ("annotated " + ", ".join(f"{k}={v:,}" for k, v in marks.items())) if marks else ""


def funnel_table(stats: list[dict[str, Any]]) -> str:
    """A plain-text table: documents and tokens in / kept / dropped, top reasons, seconds.

    >>> print(funnel_table([{"stage": "s", "in": {"documents": 2, "tokens": 9}, "kept": {"documents": 1, "tokens": 5},
    ...     "dropped": {"documents": 1, "tokens": 4}, "dropped_by_reason": {"r": {"documents": 1}}, "seconds": 1.0}]))
    stage  docs in  kept  dropped  tokens in  tokens kept  seconds  top drop reasons
    s            2     1        1          9            5      1.0  r=1
    """
    header = ["stage", "docs in", "kept", "dropped", "tokens in", "tokens kept", "seconds", "top drop reasons"]
    rows = []
    for s in stats:
        reasons = sorted(s.get("dropped_by_reason", {}).items(), key=lambda kv: -kv[1]["documents"])[:3]
        rows.append([
            s["stage"],
            f"{s['in']['documents']:,}",
            f"{s['kept']['documents']:,}",
            f"{s['dropped']['documents']:,}",
            f"{s['in']['tokens']:,}",
            f"{s['kept']['tokens']:,}",
            f"{s.get('seconds', 0):.1f}",
            ", ".join(f"{r}={v['documents']:,}" for r, v in reasons) or _annotated(s),
        ])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) if j in (0, 7) else str(c).rjust(w) for j, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
