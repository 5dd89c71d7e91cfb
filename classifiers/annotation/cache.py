"""A persistent annotation cache keyed by (model id, rubric version, text hash).

Answers are written as they arrive (a backend that reports them one by one, such as ``openai``:
every :data:`WRITE_EVERY` answers or :data:`WRITE_SECONDS` seconds, one SQLite transaction each),
after every chunk, and when a run is cut short (Ctrl-C, SIGTERM): an interrupted, crashed or
re-started run pays only for the requests that got no answer. Transport failures (timeouts, HTTP
errors) are not cached and are retried by the next run; parse failures are cached like answers
(the same prompt gives the same answer).

>>> import tempfile
>>> cache = AnnotationCache(tempfile.mkdtemp())
>>> cache.put("m", "1-abc", [CacheRecord("h1", 3.0, "Educational score: 3", None, 120, 5)])
>>> cache.get("m", "1-abc", ["h1", "h2"])["h1"].score
3.0
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

from classifiers.annotation.base import AnnotationResult, AnnotationStats, Annotator, Answer
from classifiers.rubrics import Rubric
from curation.text import text_hash

log = logging.getLogger(__name__)

#: Failures that come from the answer itself (the same request would fail the same way).
#: ``truncated`` (an answer cut by ``max_tokens`` before its score line) is one: ``max_tokens`` is in the model id.
CACHEABLE_FAILURES = frozenset({"no_final_score", "out_of_range", "empty_response", "no_score_mass", "truncated"})
#: Answers received that are written together (one transaction), at the latest after
#: :data:`WRITE_SECONDS`: a process killed outright (a worker's SIGKILL) loses at most that much.
WRITE_EVERY = 32
WRITE_SECONDS = 2.0


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


class _Writer:
    """Answers received and not yet written, stored in batches (see the module docstring).

    ``add`` is called from the backend's threads; a batch is one ``put`` (one SQLite transaction:
    a write cut short leaves the file as it was before it, and its journal is rolled back by the
    next reader). A timer thread writes what waited :data:`WRITE_SECONDS`.
    """

    def __init__(self, cache: AnnotationCache, model_id: str, rubric_version: str,
                 every: int | None = None, seconds: float | None = None) -> None:
        self.cache, self.model_id, self.rubric_version = cache, model_id, rubric_version
        self.every = max(1, int(WRITE_EVERY if every is None else every))
        self.seconds = float(WRITE_SECONDS if seconds is None else seconds)
        self.added: set[str] = set()  #: hashes given to the writer (written or pending)
        self.written = 0
        self._pending: list[CacheRecord] = []
        self._lock = threading.Lock()  # the pending list
        self._write_lock = threading.Lock()  # one put at a time
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def start(self) -> None:
        if self.seconds > 0 and self._timer is None:
            self._timer = threading.Thread(target=self._tick, name="annotation-cache-writer", daemon=True)
            self._timer.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.flush()
            except Exception as exc:  # noqa: BLE001 - the records stay pending; the chunk's write reports it
                log.warning("annotation cache: could not write received answers yet: %s", exc)

    def add(self, record: CacheRecord) -> None:
        if record.failure is not None and record.failure not in CACHEABLE_FAILURES:
            return  # transport failures are asked again by the next run
        with self._lock:
            if record.text_hash in self.added:
                return
            self.added.add(record.text_hash)
            self._pending.append(record)
            due = len(self._pending) >= self.every
        if due:
            try:
                self.flush()
            except Exception as exc:  # noqa: BLE001 - a backend thread: keep them pending for the chunk's write
                log.warning("annotation cache: could not write received answers yet: %s", exc)

    def flush(self) -> None:
        with self._write_lock:
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                self.cache.put(self.model_id, self.rubric_version, batch)
            except BaseException:
                with self._lock:
                    self._pending[:0] = batch
                raise
            self.written += len(batch)

    def close(self, interrupted: bool) -> None:
        """Stop the timer and write what is pending; while an exception unwinds (``interrupted``)
        a failed write is logged, not raised over it."""
        self._stop.set()
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001
            if not interrupted:
                raise
            log.warning("annotation cache: %d received answer(s) could not be written: %s", len(self._pending), exc)
        if interrupted and self.written:
            log.info("annotation cache: interrupted; the %d answer(s) this call received are cached", self.written)


def _takes_hook(inner: Annotator) -> bool:
    try:
        return "on_answer" in inspect.signature(inner.annotate).parameters
    except (TypeError, ValueError):
        return False


class CachedAnnotator:
    """Any :class:`Annotator` behind an :class:`AnnotationCache`; same protocol.

    Duplicate texts in one call cost one request. Misses go to the backend in chunks of
    ``chunk_size``; each chunk is stored before the next starts, and a backend that reports its
    answers as they arrive (``on_answer``) has them stored in batches while the chunk runs and
    when the call is cut short (KeyboardInterrupt, SIGTERM's ``Terminated``, any exception).
    """

    def __init__(self, inner: Annotator, cache: AnnotationCache, chunk_size: int = 64) -> None:
        self.inner = inner
        self.cache = cache
        self.chunk_size = chunk_size
        self.model_id = inner.model_id
        self.hooked = _takes_hook(inner)

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
        writer = _Writer(self.cache, self.model_id, rubric.version)
        if self.hooked and items:
            writer.start()
        try:
            for start in range(0, len(items), self.chunk_size):
                chunk = items[start : start + self.chunk_size]
                if self.hooked:
                    def received(i: int, a: Answer, chunk: list[tuple[str, str]] = chunk) -> None:
                        writer.add(CacheRecord(chunk[i][0], a.score, a.raw, a.failure, int(a.tokens_in), int(a.tokens_out)))

                    res = self.inner.annotate([t for _, t in chunk], rubric, on_answer=received)  # type: ignore[call-arg]
                else:
                    res = self.inner.annotate([t for _, t in chunk], rubric)
                inner_stats = dataclasses.replace(res.stats, documents=0, failures=0, failure_reasons={}, seconds=0.0)
                stats = stats + inner_stats
                tin = res.tokens_in or [0] * len(chunk)
                tout = res.tokens_out or [0] * len(chunk)
                records = [
                    CacheRecord(h, None if np.isnan(s) else float(s), r, f, int(a), int(b))
                    for (h, _), s, r, f, a, b in zip(chunk, res.scores, res.raw, res.failures, tin, tout, strict=True)
                ]
                for r in records:  # those the backend did not report as they came
                    writer.add(r)
                writer.flush()
                fresh.update({r.text_hash: r for r in records})
                log.info("annotated %d/%d uncached documents", min(start + self.chunk_size, len(items)), len(items))
        except BaseException:
            writer.close(interrupted=True)
            raise
        writer.close(interrupted=False)
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
