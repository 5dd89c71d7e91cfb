"""The report's HTML building blocks: a section of escaped text, tables and embedded PNG figures.

>>> s = Section("run", "Run"); s.text("a < b"); s.render().count("&lt;")
1

Kept apart from :mod:`.report`, which decides what each section shows; here is only how a part
is written (every value from the data HTML-escaped, missing values as blank cells).
"""

from __future__ import annotations

import base64
import dataclasses
import html
from typing import Any

import numpy as np
import pandas as pd

from curation.stats import plots

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.82em;margin:.6em 0}th,td{border:1px solid #ddd;padding:.2em .5em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%;display:block;margin:.6em 0}
.note{color:#8a5a00;background:#fff6e0;padding:.4em .7em;border-left:3px solid #e0a800}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:.4em;font-size:.8em;margin:.2em 0;max-height:12em;overflow:auto}
.scroll{overflow-x:auto}nav a{margin-right:1em}.example{border:1px solid #e4e4e4;padding:.4em .7em;margin:.5em 0}
"""


@dataclasses.dataclass
class Section:
    id: str
    title: str
    parts: list[str] = dataclasses.field(default_factory=list)

    def note(self, text: str) -> None:
        self.parts.append(f'<p class="note">{html.escape(text)}</p>')

    def text(self, text: str) -> None:
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def table(self, frame: pd.DataFrame, title: str | None = None, max_rows: int = 60) -> None:
        if title:
            self.parts.append(f"<h3>{html.escape(title)}</h3>")
        if frame.empty:
            self.parts.append("<p>(empty)</p>")
            return
        shown = blank_missing(frame.head(max_rows))
        ints = {c: _thousands for c in shown.columns if pd.api.types.is_integer_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c])}
        table = shown.to_html(index=False, escape=True, border=0, float_format=lambda v: f"{v:,.4g}", na_rep="", formatters=ints)
        self.parts.append(f'<div class="scroll">{table}</div>')
        if len(frame) > max_rows:
            self.text(f"… {len(frame) - max_rows} more rows")

    def figure(self, fig: Any, alt: str) -> None:
        data = base64.b64encode(plots.figure_png(fig)).decode("ascii")
        self.parts.append(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">')

    def render(self) -> str:
        return f'<section id="{self.id}">\n<h2>{html.escape(self.title)}</h2>\n' + "\n".join(self.parts) + "\n</section>"


def blank_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its object columns ready for ``to_html``: numbers and None as float (so
    ``na_rep`` blanks them and ``float_format`` applies), and None in text columns as "" — pandas
    writes a literal "None" for a None in an object column.

    >>> f = pd.DataFrame({"a": pd.Series([None, 1.5], dtype=object), "b": pd.Series([None, "x"], dtype=object)})
    >>> blank_missing(f).to_dict("list")
    {'a': [nan, 1.5], 'b': ['', 'x']}
    """
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype != object:
            continue
        values = out[col]
        present = values[values.notna()]
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in present):
            out[col] = values.astype("float64")
        else:
            out[col] = values.map(lambda v: "" if v is None or (isinstance(v, float) and v != v) else v)
    return out


def _thousands(value: object) -> str:
    return f"{value:,}" if isinstance(value, (int, np.integer)) else str(value)
