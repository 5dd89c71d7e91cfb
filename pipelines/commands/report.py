"""Write a self-contained HTML report of a run: ``curate report RUN_DIR [--output report.html]``.

The report holds the funnel, drop reasons with examples, score distributions, levels/tiers/edu
bands, the mixture per phase, the edu calibration and duplicate clusters, with embedded plots;
``--compare OTHER_RUN`` adds what changed between the two runs.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger("curate.report")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run folder written by `curate run` (or one stage folder)")
    parser.add_argument("--output", type=Path, default=None, help="HTML file to write (default: RUN_DIR/report.html)")
    parser.add_argument("--compare", type=Path, default=None, help="a second run folder to compare with")
    parser.add_argument("--examples", type=_count, default=3, help="examples of dropped documents per reason (default 3)")


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; give 0 or more")
    return value


def main(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")  # a report is written headless; never open a window
    from curation.stats.report import build_report
    from curation.stats.run import open_run
    from pipelines.kit import atomic_path
    from pipelines.output_guards import check_report_output

    out = args.output or Path(args.run_dir) / "report.html"
    check_report_output(out, "<title>curation run report: ")
    run = open_run(args.run_dir)
    other = open_run(args.compare) if args.compare else None
    page = build_report(run, compare=other, examples=args.examples)
    with atomic_path(out) as tmp:
        tmp.write_text(page, encoding="utf-8")
    print(f"wrote {out} ({len(page.encode()) / 1e6:.1f} MB)")
    return 0
