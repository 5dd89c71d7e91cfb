"""Re-check a finished run: conservation per stage, stats, manifests and shard checksums."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger("curate.verify")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run folder written by `curate run`")


def main(args: argparse.Namespace) -> int:
    from pipelines.verify import verify_run

    if not args.run_dir.exists():  # input missing: exit 4, as stats and export; 1 is for a run with problems
        raise FileNotFoundError(f"{args.run_dir} does not exist; give a run folder written by `curate run`")
    problems = verify_run(args.run_dir, _manifest_check())
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        print(f"{len(problems)} problem(s) in {args.run_dir}")
        return 1
    print(f"OK {args.run_dir}: every stage conserves its documents; stats, manifests and shards match")
    return 0


def _manifest_check():  # type: ignore[no-untyped-def]
    try:
        from curation.mixture.manifest_check import validate_manifest
    except ImportError:
        return None
    return validate_manifest
