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


def find_manifests(path: Path) -> list[Path]:
    """Manifest files under ``path`` (a file, manifests/, a stage folder or a run folder)."""
    path = Path(path)
    if path.is_file():
        return [path]
    for folder in (path / "manifests", *sorted(path.glob("*_mixture/manifests")), path):
        found = sorted(folder.glob("*.json")) if folder.is_dir() else []
        if found:
            return found
    return []


def main(args: argparse.Namespace) -> int:
    status = 0
    for root in args.path:
        manifests = find_manifests(root)
        if not manifests:
            print(f"{root}: no manifest found (expected a .json file or a manifests/ folder)")
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

