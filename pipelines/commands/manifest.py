"""Check mixture manifests: ``curate manifest validate PATH`` (the files a trainer loads: ``curate export``).

``PATH`` is a manifest JSON, a ``manifests/`` folder, a mixture stage folder or a run folder.
``validate`` checks each manifest against the shipped JSON Schema, its internal sums, and its
shards and packing files (existence, bytes, sha256, rows, token sums); it exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from curation.mixture.manifest_check import validate_manifest

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    v = sub.add_parser("validate", help="check manifests against their schema, sums and shard files")
    v.add_argument("path", type=Path, nargs="+", help="manifest JSON, manifests/ folder, mixture stage folder or run folder")
    v.add_argument("--no-files", action="store_true", help="check schema and sums only, not the shard files")


#: The JSON files curate writes that are not manifests (a run's, a stage's and an export's records).
NOT_MANIFESTS = {"run.json", "run.progress.json", "stats.json", "export.json"}


def find_manifests(path: Path) -> list[Path]:
    """Manifest files under ``path`` (a file, manifests/, a stage folder or a run folder; a folder of
    manifests copied elsewhere). A run, stage or export folder without ``manifests/`` has none."""
    path = Path(path)
    if path.is_file():
        return [path]
    for folder in (path / "manifests", *sorted(path.glob("*_mixture/manifests"))):
        found = sorted(folder.glob("*.json")) if folder.is_dir() else []
        if found:
            return found
    if any((path / name).exists() for name in (*NOT_MANIFESTS, "_SUCCESS")):
        return []
    return sorted(p for p in path.glob("*.json"))


def main(args: argparse.Namespace) -> int:
    status = 0
    for root in args.path:  # input missing: exit 4, as stats and export; 1 is for manifests with problems
        if not Path(root).exists():
            raise FileNotFoundError(f"{root} does not exist; give a manifest .json file, a folder of them, or a run folder")
    for root in args.path:
        manifests = find_manifests(root)
        if not manifests:
            print(f"{root}: no manifest found (a run or mixture stage folder has them in manifests/ once the mixture "
                  "stage has finished; or give a manifest .json file or a folder of them)")
            status = 1
        for m in manifests:
            errors = validate_manifest(m, check_files=not args.no_files)
            if errors:
                status = 1
                print(f"FAIL {m}")
                for e in errors:
                    print(f"  - {e}")
            else:
                print(f"ok   {m}")
    return status

