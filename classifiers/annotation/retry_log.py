"""What an HTTP judge logs about its retries and failed requests: a bounded number of lines, not
one a request.

Against a struggling server (tens of thousands of requests, a share of them answered 429, 503 or
not at all) a line for each retry and each failed request buried the run's progress. So, per
judge (one per worker process in ``edu_score``) and per reason (``http_429``, ``http_503``,
``timeout``, ``connection_error``, ``bad_response``, …):

- the first :data:`RETRIES_IN_FULL` retries are said in full (INFO: the reason, what the server
  said, the back-off), the later ones only counted;
- the first request that failed for good is said in full (WARNING: what the server said and what
  to change, from :func:`classifiers.annotation.diagnose.likely_fix`), and so is the request that
  opens the breaker (:mod:`~classifiers.annotation.pacing`); the others are counted;
- at most every :data:`SUMMARY_EVERY_S` seconds, one line with the counts so far (retries and
  requests failed for good by reason, answers), when something was left out since the last one
  (WARNING when requests failed for good since then, else INFO);
- the same counts reach the batch's :class:`~classifiers.annotation.base.AnnotationStats`
  (``retry_reasons``, ``failure_reasons``), which ``edu_score`` adds up over its tasks, says at
  the end of its annotations and keeps in ``stats.json``.

>>> rl = RetryLog("http://gpu-node:8000/v1", {})
>>> rl.retried("http_503", "HTTP 503: overloaded", attempt=0, delay=1.0)
>>> rl.summary()
'judge at http://gpu-node:8000/v1 so far: 0 answered, 1 retry (http_503=1), 0 requests failed for good'
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from classifiers.annotation.diagnose import is_transport, likely_fix

log = logging.getLogger("classifiers.annotation.openai")  # the judge's own logger: its lines keep their name

#: retries of one reason said in full before they are only counted
RETRIES_IN_FULL = 3
#: requests failed for good of one reason said in full (with the fix) before they are only counted
FAILURES_IN_FULL = 1
#: seconds between two summary lines, at least
SUMMARY_EVERY_S = 60.0


def counted(counts: dict[str, int]) -> str:
    """``reason=n, …``, most frequent first.

    >>> counted({"timeout": 2, "http_429": 5})
    'http_429=5, timeout=2'
    """
    return ", ".join(f"{r}={n:,}" for r, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class RetryLog:
    """Counts and bounded log lines of one judge's retries and failures, across its threads.

    ``where``: the server's URL, named in each line; ``config``: the judge's settings, for the
    fix a failure's first line gives (:func:`~classifiers.annotation.diagnose.likely_fix`)."""

    def __init__(self, where: str, config: dict[str, Any], every_s: float | None = None) -> None:
        self.where = where
        self.config = config
        self.every_s = SUMMARY_EVERY_S if every_s is None else float(every_s)
        self.retries: dict[str, int] = {}
        self.failures: dict[str, int] = {}
        self.answers = 0
        self._left_out = 0  # lines not said since the last summary
        self._failed_since = False
        self._last_summary = time.monotonic()
        self._lock = threading.Lock()

    def answered(self) -> None:
        with self._lock:
            self.answers += 1

    def retried(self, reason: str, detail: str, attempt: int, delay: float) -> None:
        """A request that failed with ``reason`` and is sent again in ``delay`` seconds."""
        with self._lock:
            n = self.retries[reason] = self.retries.get(reason, 0) + 1
            answers = self.answers
            full = n <= RETRIES_IN_FULL
            self._left_out += not full
        if full:
            fix = f": if it goes on, {self._fix(reason, detail, answers)}" if n == 1 else ""
            last = (
                f"; later {reason} retries are counted, in a summary line at most every {self.every_s:g} s"
                if n == RETRIES_IN_FULL
                else ""
            )
            log.info(
                "request to %s: %s (%s), retry %d in %.2fs%s%s",
                self.where,
                reason,
                detail,
                attempt + 1,
                delay,
                fix,
                last,
            )
        self._maybe_summary()

    def failed(self, reason: str, detail: str, attempts: int, in_a_row: int, threshold: int) -> None:
        """A request that failed for good after ``attempts``; ``in_a_row``: the breaker's count."""
        with self._lock:
            n = self.failures[reason] = self.failures.get(reason, 0) + 1
            answers = self.answers
            full = n <= FAILURES_IN_FULL or in_a_row == threshold
            self._left_out += not full
            self._failed_since = True
        if full:
            fix = self._fix(reason, detail, answers)
            tripped = (
                f" ({in_a_row} in a row: the rest are not sent until one is answered)" if in_a_row == threshold else ""
            )
            later = (
                f"; later {reason} failures are counted, in a summary line at most every {self.every_s:g} s"
                if n == FAILURES_IN_FULL
                else ""
            )
            log.warning(
                "request to %s failed for good: %s after %d attempt(s) (%s)%s: %s%s",
                self.where,
                reason,
                attempts,
                detail,
                tripped,
                fix,
                later,
            )
        self._maybe_summary()

    def _fix(self, reason: str, detail: str, answers: int) -> str:
        return likely_fix({reason: 1}, {reason: detail}, self.config, answers)

    def counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """(retries by reason, requests failed for good by reason) so far."""
        with self._lock:
            return dict(self.retries), dict(self.failures)

    def summary(self) -> str:
        retries, failures = self.counts()
        n_retries, n_failed = sum(retries.values()), sum(failures.values())
        return (
            f"judge at {self.where} so far: {self.answers:,} answered, {n_retries:,} retr{'y' if n_retries == 1 else 'ies'}"
            f"{f' ({counted(retries)})' if retries else ''}, {n_failed:,} requests failed for good"
            f"{f' ({counted(failures)})' if failures else ''}"
        )

    def _maybe_summary(self) -> None:
        with self._lock:
            now = time.monotonic()
            if not self._left_out or now - self._last_summary < self.every_s:
                return
            level = logging.WARNING if self._failed_since else logging.INFO
            self._left_out, self._failed_since, self._last_summary = 0, False, now
        log.log(level, "%s", self.summary())


def stats_summary(where: str, stats: Any) -> str:
    """One line of a whole annotation's retries and requests failed for good (``stats``: its
    :class:`~classifiers.annotation.base.AnnotationStats`, added up over tasks and processes).

    >>> from classifiers.annotation.base import AnnotationStats
    >>> s = AnnotationStats(documents=10, requests=14, retries=4, failures=2, retry_reasons={"http_429": 3, "timeout": 1},
    ...                     failure_reasons={"timeout": 1, "no_final_score": 1})
    >>> stats_summary("http://gpu-node:8000/v1", s)
    'judge at http://gpu-node:8000/v1: 14 requests for 10 documents, 4 retries (http_429=3, timeout=1), 1 request failed for good (timeout=1)'
    """
    failed = {r: n for r, n in stats.failure_reasons.items() if is_transport(r)}
    n_failed = sum(failed.values())
    return (
        f"judge at {where}: {stats.requests:,} requests for {stats.documents:,} documents, {stats.retries:,} "
        f"retr{'y' if stats.retries == 1 else 'ies'}{f' ({counted(stats.retry_reasons)})' if stats.retry_reasons else ''}, "
        f"{n_failed:,} request{'' if n_failed == 1 else 's'} failed for good{f' ({counted(failed)})' if failed else ''}"
    )
