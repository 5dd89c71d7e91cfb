"""How an HTTP judge's requests are paced across threads: a rate limit, and a breaker that stops
sending once the server has failed request after request.

A judge that is down (connection refused, a gateway answering 502, every request timing out)
would otherwise take each of its thousands of requests through all its retries and back-offs
before the stage could say so: 450 requests, 8 at a time, ~11 s of back-off each, is ten minutes of
waiting for a message that the first few requests already had. The breaker opens after
``threshold`` requests in a row failed for good (each after its own retries) with no answer read in
between; every later request fails at once with the same reason, without being sent, and its raw
answer says why. Any answer resets the count, so a server that drops a few requests under load
keeps being asked. A batch that starts a cool-down (60 s) or more after the breaker tripped
(:meth:`Breaker.probe`) sends requests again until one more fails, so a process that keeps its judge
between runs (a long-lived Dask worker, a notebook) asks a server that came back.

>>> b = Breaker(threshold=2, cooldown_s=0)
>>> b.failed("connection_error", "[Errno 111] Connection refused"), b.tripped() is None
(1, True)
>>> b.failed("connection_error", "[Errno 111] Connection refused"), b.tripped()
(2, ('connection_error', 'not sent: the 2 requests before it failed for good; the last: [Errno 111] Connection refused'))
>>> b.probe(); b.tripped() is None
True
>>> b.answered(); b.tripped() is None
True
"""

from __future__ import annotations

import random
import threading
import time

#: how the raw answer of a request the breaker did not send begins, and what comes before the
#: last failure's own answer in it
NOT_SENT, LAST = "not sent: ", "; the last: "


def server_answer(raw: str) -> str:
    """What the server (or the socket) said: a raw answer as it is, or the last failure's answer
    that the raw answer of a request not sent quotes."""
    return raw.split(LAST, 1)[1] if raw.startswith(NOT_SENT) and LAST in raw else raw


class RateLimiter:
    """At most ``rps`` request starts per second across threads (0 = unlimited)."""

    def __init__(self, rps: float) -> None:
        self.interval = 1.0 / rps if rps > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


#: seconds a tripped breaker refuses every request before a new batch may try the server again
COOLDOWN_S = 60.0


def breaker_threshold(concurrency: int) -> int:
    """Requests failed for good in a row that open the breaker: two rounds of the requests in
    flight, at least 8 (a round of ``concurrency`` requests can fail together in one outage)."""
    return max(8, 2 * int(concurrency))


class Breaker:
    """Consecutive requests that failed for good, across threads (see the module docstring)."""

    def __init__(self, threshold: int, cooldown_s: float = COOLDOWN_S) -> None:
        self.threshold = max(1, int(threshold))
        self.cooldown_s = float(cooldown_s)
        self._tripped_at = 0.0
        self._in_a_row = 0
        self._last: tuple[str, str] = ("", "")
        self._lock = threading.Lock()

    def answered(self) -> None:
        with self._lock:
            self._in_a_row = 0

    def failed(self, reason: str, detail: str) -> int:
        """Count a request that failed for good; returns how many in a row have now."""
        with self._lock:
            self._in_a_row += 1
            self._last = (reason, detail)
            if self._in_a_row == self.threshold:
                self._tripped_at = time.monotonic()
            return self._in_a_row

    def probe(self) -> None:
        """A new batch (a chunk, a task of a run, a later run in a process that keeps its judge): a
        breaker tripped ``cooldown_s`` ago or more lets requests through again until one more fails
        for good, which trips it again, or one is answered, which closes it. A server that came back
        is asked again; one still down costs a round of requests a cool-down, not one a batch (a
        sample of 450k documents is ~1,800 tasks and ~7,000 cache chunks)."""
        with self._lock:
            if self._in_a_row >= self.threshold and time.monotonic() - self._tripped_at >= self.cooldown_s:
                self._in_a_row = self.threshold - 1

    def tripped(self) -> tuple[str, str] | None:
        """``(reason, detail)`` for a request not sent because the breaker is open, else None."""
        with self._lock:
            if self._in_a_row < self.threshold:
                return None
            reason, detail = self._last
            return reason, f"{NOT_SENT}the {self._in_a_row} requests before it failed for good{LAST}{detail}"


def backoff_delay(attempt: int, backoff_s: float, backoff_max_s: float, wait_at_least: float | None,
                  retry_after_max_s: float, jitter: float | None = None) -> float:
    """Seconds before retry ``attempt + 1``: ``backoff_s · 2^attempt`` capped at ``backoff_max_s``,
    with jitter (×0.5–1), and at least the server's ``Retry-After`` (``wait_at_least``) up to
    ``retry_after_max_s``.

    >>> backoff_delay(3, 1.0, 30.0, None, 600.0, jitter=1.0), backoff_delay(0, 1.0, 30.0, 100.0, 600.0, jitter=1.0)
    (8.0, 100.0)
    >>> backoff_delay(0, 1.0, 30.0, 3600.0, 600.0, jitter=1.0)
    600.0
    """
    scale = 0.5 + random.random() / 2 if jitter is None else jitter
    delay = min(backoff_max_s, backoff_s * 2**attempt) * scale
    return delay if wait_at_least is None else max(delay, min(wait_at_least, retry_after_max_s))
