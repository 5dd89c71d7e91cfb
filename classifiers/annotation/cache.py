"""A persistent annotation cache keyed by (model id, rubric version, text hash).

Answers are written after every chunk, so a crashed or re-started run pays only for what it
had not finished. Transport failures (timeouts, HTTP errors) are not cached and are retried by
the next run; parse failures are cached like answers (the same prompt gives the same answer).

>>> import tempfile
>>> cache = AnnotationCache(tempfile.mkdtemp())
>>> cache.put("m", "1-abc", [CacheRecord("h1", 3.0, "Educational score: 3", None, 120, 5)])
>>> cache.get("m", "1-abc", ["h1", "h2"])["h1"].score
3.0
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import sqlite3
import time
from pathlib import Path

import numpy as np

from classifiers.annotation.base import AnnotationResult, AnnotationStats, Annotator
from classifiers.rubrics import Rubric
from curation.text import text_hash

log = logging.getLogger(__name__)

#: Failures that come from the answer itself (the same request would fail the same way).
CACHEABLE_FAILURES = frozenset({"no_final_score", "out_of_range", "empty_response", "no_score_mass"})


@dataclasses.dataclass(frozen=True)
class CacheRecord:
    text_hash: str
    score: float | None
    raw: str
    failure: str | None
    tokens_in: int = 0
    tokens_out: int = 0


class AnnotationCache:
    """SQLite files ``annotations*.sqlite`` in ``folder``; safe to share between runs and workers.

    Each process writes its own file (``annotations-<host>-<pid>.sqlite``) and reads every file
    of the folder (an older run's single ``annotations.sqlite`` included). Annotation runs on the
    workers, and on a cluster the folder is on a shared file system, where one SQLite file written
    from several machines is not safe (its write-ahead log needs memory shared on one host); a
    file with one writer, in SQLite's default rollback-journal mode, is.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / f"annotations-{_host()}-{os.getpid()}.sqlite"  #: this process's file

    def _connect(self, path: Path | None = None) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(path or self.path, timeout=60)
        con.execute(
            "CREATE TABLE IF NOT EXISTS annotations (model_id TEXT, rubric_version TEXT, text_hash TEXT, "
            "score REAL, raw TEXT, failure TEXT, tokens_in INTEGER, tokens_out INTEGER, created REAL, "
            "PRIMARY KEY (model_id, rubric_version, text_hash))"
        )
        return con

    def files(self) -> list[Path]:
        """Every cache file of the folder, in name order (a later file's answer wins)."""
        return sorted(self.folder.glob("annotations*.sqlite")) if self.folder.is_dir() else []

    def get(self, model_id: str, rubric_version: str, hashes: list[str]) -> dict[str, CacheRecord]:
        """The cached records among ``hashes``."""
        out: dict[str, CacheRecord] = {}
        for path in self.files():
            con = self._connect(path)
            try:
                for start in range(0, len(hashes), 500):
                    chunk = hashes[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = con.execute(
                        f"SELECT text_hash, score, raw, failure, tokens_in, tokens_out FROM annotations "
                        f"WHERE model_id = ? AND rubric_version = ? AND text_hash IN ({marks})",
                        [model_id, rubric_version, *chunk],
                    ).fetchall()
                    for h, score, raw, failure, tin, tout in rows:
                        out[h] = CacheRecord(h, score, raw or "", failure, int(tin or 0), int(tout or 0))
            finally:
                con.close()
        return out

    def put(self, model_id: str, rubric_version: str, records: list[CacheRecord]) -> None:
        con = self._connect()
        try:
            with con:
                con.executemany(
                    "INSERT OR REPLACE INTO annotations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (model_id, rubric_version, r.text_hash, r.score, r.raw, r.failure, r.tokens_in, r.tokens_out, time.time())
                        for r in records
                    ],
                )
        finally:
            con.close()

    def __len__(self) -> int:
        """Distinct (model, rubric, text) entries over every file."""
        keys: set[tuple[str, str, str]] = set()
        for path in self.files():
            con = self._connect(path)
            try:
                keys.update(con.execute("SELECT model_id, rubric_version, text_hash FROM annotations").fetchall())
            finally:
                con.close()
        return len(keys)


def _host() -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in socket.gethostname()) or "host"


class CachedAnnotator:
    """Any :class:`Annotator` behind an :class:`AnnotationCache`; same protocol.

    Duplicate texts in one call cost one request. Misses go to the backend in chunks of
    ``chunk_size``; each chunk is stored before the next starts.
    """

    def __init__(self, inner: Annotator, cache: AnnotationCache, chunk_size: int = 64) -> None:
        self.inner = inner
        self.cache = cache
        self.chunk_size = chunk_size
        self.model_id = inner.model_id

    def annotate(self, texts: list[str], rubric: Rubric) -> AnnotationResult:
        started = time.time()
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get(self.model_id, rubric.version, sorted(set(hashes)))
        stats = AnnotationStats(documents=len(texts))
        stats.cache_hits = sum(1 for h in hashes if h in known)
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in known and h not in todo:
                todo[h] = t
        fresh: dict[str, CacheRecord] = {}
        items = list(todo.items())
        for start in range(0, len(items), self.chunk_size):
            chunk = items[start : start + self.chunk_size]
            res = self.inner.annotate([t for _, t in chunk], rubric)
            inner_stats = dataclasses.replace(res.stats, documents=0, failures=0, failure_reasons={}, seconds=0.0)
            stats = stats + inner_stats
            tin = res.tokens_in or [0] * len(chunk)
            tout = res.tokens_out or [0] * len(chunk)
            records = [
                CacheRecord(h, None if np.isnan(s) else float(s), r, f, int(a), int(b))
                for (h, _), s, r, f, a, b in zip(chunk, res.scores, res.raw, res.failures, tin, tout, strict=True)
            ]
            self.cache.put(self.model_id, rubric.version, [r for r in records if r.failure is None or r.failure in CACHEABLE_FAILURES])
            fresh.update({r.text_hash: r for r in records})
            log.info("annotated %d/%d uncached documents", min(start + self.chunk_size, len(items)), len(items))
        scores, raw, failures = [], [], []
        for h in hashes:
            rec = known.get(h) or fresh[h]
            scores.append(np.nan if rec.score is None else rec.score)
            raw.append(rec.raw)
            failures.append(rec.failure)
        stats.count_failures(failures)
        stats.seconds = time.time() - started
        by_hash = {**known, **fresh}
        return AnnotationResult(
            np.asarray(scores, dtype="float64"), raw, failures, stats,
            tokens_in=[by_hash[h].tokens_in for h in hashes], tokens_out=[by_hash[h].tokens_out for h in hashes],
        )
