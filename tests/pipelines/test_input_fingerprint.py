"""A raw input edited in place, anywhere, at the same size: ingest sees it. Unchanged files are not
read again on a re-run (their checksums are kept with their sizes and times)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd

import pipelines.marker as marker
from pipelines.cli import main as curate


def _corpus(path: Path) -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    rows = [{"id": f"d{i}", "text": " ".join(words[(i + j) % 5] + str(j) for j in range(120_000))} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert path.stat().st_size > 3 << 20  # the middle document lies beyond the first and last MiB


def _ingest(src: Path, out: Path) -> int:
    return curate(["ingest", "--input", str(src), "--output", str(out), "--source", "web", "--scheduler", "synchronous", "--quiet"])


def test_an_edit_in_the_middle_at_the_same_size_reruns_ingest(tmp_path, caplog, monkeypatch):
    caplog.set_level(logging.INFO)
    src, out = tmp_path / "web.jsonl", tmp_path / "ingest"
    _corpus(src)
    assert _ingest(src, out) == 0
    assert (out / ".cache" / "ingest" / "input-checksums.json").is_file()  # kept from the first run on
    before = pd.read_parquet(out / "docs", columns=["text"])["text"].tolist()
    data = src.read_bytes()
    middle = data.index(b"\n") + 1 + len(data) // 6  # inside the second document
    at = data.index(b"alpha", middle)
    src.write_bytes(data[:at] + b"ALPHA" + data[at + 5 :])
    stamp = src.stat().st_mtime_ns + 1_000_000_000
    os.utime(src, ns=(stamp, stamp))
    caplog.clear()
    assert _ingest(src, out) == 0
    assert "up to date" not in caplog.text
    after = pd.read_parquet(out / "docs", columns=["text"])["text"].tolist()
    assert len(after) == len(before) == 3 and sum(a != b for a, b in zip(after, before, strict=True)) == 1
    assert any("ALPHA" in t for t in after)
    # a touch: read once more (its time changed), found the same, skipped; then no file is read at all
    read: list[Path] = []
    real = marker.checksum
    monkeypatch.setattr(marker, "checksum", lambda p: read.append(Path(p)) or real(p))
    os.utime(src, ns=(stamp + 1_000_000_000, stamp + 1_000_000_000))
    caplog.clear()
    assert _ingest(src, out) == 0
    assert "ingest: up to date" in caplog.text and read == [src]
    caplog.clear()
    assert _ingest(src, out) == 0
    assert "ingest: up to date" in caplog.text and read == [src]
    # another file of the same size put in its place with the old times (cp -p, rsync -t): read, and ingest re-runs
    data = src.read_bytes()
    other = tmp_path / "other.jsonl"
    other.write_bytes(data.replace(b"beta", b"BETA", 1))
    st = src.stat()
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, src)
    caplog.clear()
    assert _ingest(src, out) == 0
    assert "up to date" not in caplog.text and any("BETA" in t for t in pd.read_parquet(out / "docs", columns=["text"])["text"])
