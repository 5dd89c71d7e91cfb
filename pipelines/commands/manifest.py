"""Check or export mixture manifests: ``curate manifest validate PATH`` / ``curate manifest export PATH``.

``PATH`` is a manifest JSON, a ``manifests/`` folder, a mixture stage folder or a run folder.
``validate`` checks each manifest against the shipped JSON Schema, its internal sums, and its
shards and packing files (existence, bytes, sha256, rows, token sums); it exits 1 on any problem.
``export`` prints the Megatron-LM ``--data-path`` blend or the ``datasets.interleave_datasets``
arguments with absolute paths.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from curation.mixture.manifest_check import validate_manifest

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    v = sub.add_parser("validate", help="check manifests against their schema, sums and shard files")
    v.add_argument("path", type=Path, nargs="+", help="manifest JSON, manifests/ folder, mixture stage folder or run folder")
    v.add_argument("--no-files", action="store_true", help="check schema and sums only, not the shard files")
    e = sub.add_parser("export", help="print a manifest's Megatron blend or interleave_datasets arguments")
    e.add_argument("path", type=Path, help="manifest JSON")
    e.add_argument("--format", choices=("megatron", "interleave"), default="megatron")


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
    if args.action == "export":
        return _export(args.path, args.format)
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


def _export(path: Path, fmt: str) -> int:
    manifest = json.loads(Path(path).read_text())
    base = (Path(path).parent / manifest["base_dir"]).resolve()
    exports = manifest["exports"]
    if fmt == "megatron":
        items = exports["megatron_data_path"].split()
        print(" ".join(x if i % 2 == 0 else str(base / x) for i, x in enumerate(items)))
    else:
        inter = dict(exports["interleave_datasets"])
        inter["data_files"] = [[str(base / f) for f in files] for files in inter["data_files"]]
        print(json.dumps(inter, indent=2))
    return 0
