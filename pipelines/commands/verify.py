"""Re-check a finished run: conservation per stage, stats, manifests and shard checksums."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger("curate.verify")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run folder written by `curate run`, a folder of stage folders run one by one, or one stage folder")


def main(args: argparse.Namespace) -> int:
    from pipelines.verify import verify_run

    if not args.run_dir.exists():  # input missing: exit 4, as stats and export; 1 is for a run with problems
        raise FileNotFoundError(f"{args.run_dir} does not exist; give a run folder written by `curate run`, or stage folders")
    problems = verify_run(args.run_dir, _manifest_check())
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        print(f"{len(problems)} problem(s) in {args.run_dir}")
        damaged = sorted({p.split(":", 1)[0] for p in problems if any(w in p for w in _DAMAGE)})
        if damaged:  # a resumed run checks names, sizes and rows, not contents: it would keep these as they are
            folders = " ".join(str(args.run_dir / d) for d in damaged)
            print(f"files changed after they were written: delete the damaged stage folder(s) (rm -r {folders}) "
                  "and re-run the same command to make them again")
        return 1
    print(f"OK {args.run_dir}: every stage conserves its documents; stats, manifests and shards match")
    return 0


#: how :func:`pipelines.marker.check_files` words a file changed or cut after it was written
_DAMAGE = ("content differs from what was written", "is not readable Parquet", "its marker recorded")


def _manifest_check():  # type: ignore[no-untyped-def]
    try:
        from curation.mixture.manifest_check import validate_manifest
    except ImportError:
        return None
    return validate_manifest
