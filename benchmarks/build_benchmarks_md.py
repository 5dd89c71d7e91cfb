"""Rebuild BENCHMARKS.md from the per-topic RESULTS.md files (run after a benchmark changes).

    python benchmarks/build_benchmarks_md.py

``tests/test_benchmarks_doc.py`` fails when BENCHMARKS.md is not what this script makes of them.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["minhash_dedup", "semdedup", "web_quality", "code_quality", "edu_score", "mixture", "mixture_recipe", "reliability", "languages", "extract"]
# result files of other topics follow in alphabetical order

HEADER = """# Benchmarks

One section per topic: each figure with the command that reproduces it and the peer it was
measured against **in the same run**.

**Machine**, unless a section names another: 2 cores (Intel Xeon), 24 GiB, no GPU, Python 3.11.
Other jobs shared the two cores (load average often 10–20), so wall-clock figures are slower
than on an idle machine and vary between runs: read the comparisons between peers of one run,
and the per-CPU-second figures where given. The CUDA, faiss-gpu and vLLM paths exist and are
tested for their CPU fallbacks, but have not been timed.

The sections are the topics' own result files (`benchmarks/<topic>/RESULTS.md`), gathered by
`python benchmarks/build_benchmarks_md.py`; the history of each figure is in `git log`.
"""


def render() -> str:
    """BENCHMARKS.md's text: the header, then every topic's RESULTS.md with headings one level down."""
    parts = [HEADER]
    others = sorted(p.parent.name for p in (ROOT / "benchmarks").glob("*/RESULTS.md") if p.parent.name not in ORDER)
    for name in ORDER + others:
        path = ROOT / "benchmarks" / name / "RESULTS.md"
        if not path.exists():
            continue
        text = path.read_text().strip()
        # demote headings one level so each topic is a section of this page
        lines, fenced = [], False
        for ln in text.splitlines():
            if ln.startswith("```"):
                fenced = not fenced
            lines.append("#" + ln if ln.startswith("#") and not fenced else ln)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def main() -> None:
    (ROOT / "BENCHMARKS.md").write_text(render())


if __name__ == "__main__":
    main()
