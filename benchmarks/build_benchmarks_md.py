"""Rebuild BENCHMARKS.md from the per-stage RESULTS.md files (run after a benchmark changes).

    python benchmarks/build_benchmarks_md.py
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["minhash_dedup", "semdedup", "web_quality", "code_quality", "edu_score", "mixture", "mixture_recipe", "reliability", "languages", "extract"]
# result files of other topics follow in alphabetical order

HEADER = """# Benchmarks

Every figure below was measured on the development machine — 2 cores (Intel Xeon; the sixth to
eleventh sessions of issue 20 in benchmarks/recipe ran on 2 cores of an AMD EPYC, and say so), 24 GiB, no
GPU, Python 3.11 — with the command next to it, against the peer named beside it **in the same
run**. While these were measured, other jobs shared the two cores (load average often 10–20), so
wall-clock figures are slower than on an idle machine and vary between runs; comparisons between
peers in one run, and per-CPU-second figures where given, are the ones to read. No GPU was lent
to this task: the CUDA, faiss-gpu and vLLM paths exist and are tested for their CPU fallbacks, but
have not been timed.

The sections are the stages' own result files (`benchmarks/<stage>/RESULTS.md`), gathered by
`python benchmarks/build_benchmarks_md.py`.
"""


def main() -> None:
    parts = [HEADER]
    others = sorted(p.parent.name for p in (ROOT / "benchmarks").glob("*/RESULTS.md") if p.parent.name not in ORDER)
    for name in ORDER + others:
        path = ROOT / "benchmarks" / name / "RESULTS.md"
        if not path.exists():
            continue
        text = path.read_text().strip()
        # demote headings one level so each stage is a section of this page
        lines, fenced = [], False
        for ln in text.splitlines():
            if ln.startswith("```"):
                fenced = not fenced
            lines.append("#" + ln if ln.startswith("#") and not fenced else ln)
        parts.append("\n".join(lines))
    (ROOT / "BENCHMARKS.md").write_text("\n\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
