"""Content digests of a run folder, to prove a refactor changes no output.

Every Parquet file (documents, ledgers, shards, artifacts) is digested by its schema and its rows
in order; every JSON file by its content without the fields that name a machine, a time or a
library version. Floats count to 6 significant digits (see ``_scrub``). Files that only record how a run went (``stats.json``, ``_SUCCESS``,
``run.json``, caches) are left out: they hold timings.

    python -m tests.golden runs/sample > tests/golden/sample_run.json   # after a deliberate change
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import xxhash

#: JSON keys whose values describe the run, not the data: times, versions, machines; input
#: fingerprints (they hash the input files' absolute paths) and byte checksums of Parquet files
#: (their bytes name the pyarrow version; their rows are digested by content instead).
VOLATILE_KEYS = {
    "created_by", "created_at", "versions", "seconds", "wall_seconds", "cpu_seconds", "driver_cpu_seconds", "host", "pid", "elapsed",
    "input_fingerprint", "output_fingerprint", "sha256",
}
SKIPPED_NAMES = {"stats.json", "_SUCCESS", "run.json", "_DONE", ".lock"}


def _volatile(key: str) -> bool:
    return key in VOLATILE_KEYS or key.endswith(("seconds", "per_s", "per_second"))


def _scrub(value: Any) -> Any:
    """Drop volatile keys and round floats to 6 significant digits: the last bits of a model's
    output may differ between CPU instruction sets, the decisions made from them may not."""
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in sorted(value.items()) if not _volatile(k)}
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.6g}")
    return value


def file_digest(path: Path) -> str:
    h = xxhash.xxh3_64()
    if path.suffix == ".parquet":
        table = pq.read_table(path).combine_chunks()  # rows, not their row groups
        # string and large_string hold the same values; which one a column gets depends on whether
        # a partition crossed a process boundary, so the schema is digested with one spelling
        h.update(str(table.schema.remove_metadata()).replace("large_string", "string").encode())
        for batch in table.to_batches(max_chunksize=4096):
            h.update(json.dumps(_scrub(batch.to_pylist()), sort_keys=True, default=str).encode())
    elif path.suffix == ".json":
        h.update(json.dumps(_scrub(json.loads(path.read_text())), sort_keys=True, default=str).encode())
    else:
        h.update(path.read_bytes())
    return h.hexdigest()


def run_digests(run: Path) -> dict[str, str]:
    """``relative path → digest`` for every output file of the stage folders of ``run``."""
    out: dict[str, str] = {}
    for path in sorted(Path(run).rglob("*")):
        rel = path.relative_to(run)
        if not path.is_file() or rel.parts[0].startswith(".") or path.name in SKIPPED_NAMES:
            continue
        out[str(rel)] = file_digest(path)
    return out


def compare(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Every difference, one line each (missing, extra, changed)."""
    lines = [f"missing: {k}" for k in sorted(set(expected) - set(actual))]
    lines += [f"extra:   {k}" for k in sorted(set(actual) - set(expected))]
    lines += [f"changed: {k}" for k in sorted(set(expected) & set(actual)) if expected[k] != actual[k]]
    return lines


if __name__ == "__main__":
    json.dump(run_digests(Path(sys.argv[1])), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
