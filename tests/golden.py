"""Content digests of a run folder, to prove a refactor changes no output.

Every Parquet file (documents, ledgers, shards, artifacts) is digested by its schema and its rows
in order; every JSON file by its content without the fields that name a machine, a time or a
library version. Files that only record how a run went (``stats.json``, ``_SUCCESS``, ``run.json``,
caches) are left out: they hold timings.

Floats are not in the digest. The last bits of a model's output differ between CPUs (the same
sample run gave edu scores 1.3e-4 apart with torch's AVX2 and AVX-512 kernels, and SemDeDup's
similarities moved between an Intel and an AMD machine), and no rounding keeps a value that
straddles a rounding step the same. So each file's digest covers everything else (ids, text,
decisions, buckets, levels, reasons, the floats' positions and NaNs), and its floats, those inside
JSON strings such as a ledger's ``detail`` included, are summed three ways (plain, weighted by
position, absolute) and compared within ``FLOAT_TOLERANCE`` of their absolute sum: a decision that
changes still changes the digest, a float that moves by more than a model's last bits still
changes the sums. A file's record is ``"<digest>"`` or ``"<digest> <n> <sum> <weighted> <abs>"``.

    python -m tests.golden runs/sample > tests/sample_run_digests.json   # after a deliberate change
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import xxhash

#: JSON keys whose values describe the run, not the data: times, versions, machines; input
#: fingerprints (they hash the input files' absolute paths), and the byte sizes and checksums of
#: Parquet files (their bytes name the pyarrow version and the floats' last bits; their rows are
#: digested by content instead).
VOLATILE_KEYS = {
    "created_by", "created_at", "versions", "seconds", "wall_seconds", "cpu_seconds", "driver_cpu_seconds", "host", "pid", "elapsed",
    "input_fingerprint", "output_fingerprint", "sha256", "bytes",
}
SKIPPED_NAMES = {"stats.json", "_SUCCESS", "run.json", "_DONE", ".lock"}

#: How far a file's float sums may move, as a share of the sum of their absolute values.
FLOAT_TOLERANCE = 1e-3


def _volatile(key: str) -> bool:
    return key in VOLATILE_KEYS or key.endswith(("seconds", "per_s", "per_second"))


class _Floats:
    """The floats met, in order: count and three sums."""

    def __init__(self) -> None:
        self.n, self.total, self.weighted, self.absolute = 0, 0.0, 0.0, 0.0

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        self.weighted += x * (1.0 + (self.n * 2654435761 % 1000) / 1000.0)
        self.absolute += abs(x)


def _scrub(value: Any, floats: _Floats) -> Any:
    """Drop volatile keys; put each finite float in ``floats`` and a placeholder in its place."""
    if isinstance(value, dict):
        return {k: _scrub(v, floats) for k, v in sorted(value.items()) if not _volatile(k)}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, floats) for v in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        floats.add(value)
        return "<float>"
    if isinstance(value, str) and value[:1] in "{[" and value[-1:] in "}]":
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return {"<json>": _scrub(parsed, floats)}
    return value


def file_digest(path: Path) -> str:
    h = xxhash.xxh3_64()
    floats = _Floats()
    if path.suffix == ".parquet":
        table = pq.read_table(path).combine_chunks()  # rows, not their row groups
        # string and large_string hold the same values; which one a column gets depends on whether
        # a partition crossed a process boundary, so the schema is digested with one spelling
        h.update(str(table.schema.remove_metadata()).replace("large_string", "string").encode())
        for batch in table.to_batches(max_chunksize=4096):
            h.update(json.dumps(_scrub(batch.to_pylist(), floats), sort_keys=True, default=str).encode())
    elif path.suffix == ".json":
        h.update(json.dumps(_scrub(json.loads(path.read_text()), floats), sort_keys=True, default=str).encode())
    else:
        h.update(path.read_bytes())
    if not floats.n:
        return h.hexdigest()
    return f"{h.hexdigest()} {floats.n} {floats.total!r} {floats.weighted!r} {floats.absolute!r}"


def same(expected: str, actual: str) -> bool:
    """The same digest and float count, and float sums within ``FLOAT_TOLERANCE``."""
    e, a = expected.split(), actual.split()
    if e[:2] != a[:2] or len(e) != len(a):
        return False
    if len(e) == 1:
        return True
    scale = max(float(e[4]), float(a[4]), 1e-12)
    return all(abs(float(x) - float(y)) <= FLOAT_TOLERANCE * scale for x, y in zip(e[2:], a[2:], strict=True))


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
    lines += [f"changed: {k}" for k in sorted(set(expected) & set(actual)) if not same(expected[k], actual[k])]
    return lines


if __name__ == "__main__":
    json.dump(run_digests(Path(sys.argv[1])), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
