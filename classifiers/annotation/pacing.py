"""How an HTTP judge's requests are paced across threads: a rate limit, and a breaker that stops
sending once the server has failed request after request.

A judge that is down (connection refused, a gateway answering 502, every request timing out)
would otherwise take each of its thousands of requests through all its retries and back-offs
before the stage could say so: 450 requests, 8 at a time, ~11 s of back-off each, is ten minutes of
waiting for a message that the first few requests already had. The breaker opens after
``threshold`` requests in a row failed for good (each after its own retries) with no answer read in
between; every later request fails at once with the same reason, without being sent, and its raw
answer says why. Any answer resets the count, so a server that drops a few requests under load
keeps being asked.

>>> b = Breaker(threshold=2)
>>> b.failed("connection_error", "[Errno 111] Connection refused"); b.tripped() is None
True
>>> b.failed("connection_error", "[Errno 111] Connection refused"); b.tripped()
('connection_error', 'not sent: the 2 requests before it failed for good (connection_error: [Errno 111] Connection refused)')
>>> b.answered(); b.tripped() is None
True
"""

from __future__ import annotations

import threading
import time


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


def breaker_threshold(concurrency: int) -> int:
    """Requests failed for good in a row that open the breaker: two rounds of the requests in
    flight, at least 8 (a round of ``concurrency`` requests can fail together in one outage)."""
    return max(8, 2 * int(concurrency))


class Breaker:
    """Consecutive requests that failed for good, across threads (see the module docstring)."""

    def __init__(self, threshold: int) -> None:
        self.threshold = max(1, int(threshold))
        self._in_a_row = 0
        self._last: tuple[str, str] = ("", "")
        self._lock = threading.Lock()

    def answered(self) -> None:
        with self._lock:
            self._in_a_row = 0

    def failed(self, reason: str, detail: str) -> None:
        with self._lock:
            self._in_a_row += 1
            self._last = (reason, detail)

    def tripped(self) -> tuple[str, str] | None:
        """``(reason, detail)`` for a request not sent because the breaker is open, else None."""
        with self._lock:
            if self._in_a_row < self.threshold:
                return None
            reason, detail = self._last
            return reason, f"not sent: the {self._in_a_row} requests before it failed for good ({reason}: {detail})"
