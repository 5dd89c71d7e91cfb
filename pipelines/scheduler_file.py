"""The address in a ``--scheduler`` file, waited for while the file is being written.

``dask scheduler --scheduler-file sched.json`` writes its file once it listens: in a batch script
that starts the scheduler and ``curate`` at once, the file is missing, empty or half-written when
``curate`` first reads it. :func:`file_address` waits, up to ``timeout`` seconds (the connect timeout
of :data:`pipelines.cluster.CONNECT_TIMEOUT_S`), for the file to appear and hold complete JSON,
saying once that it waits; a file still missing or incomplete then is one line naming what to start
(:class:`pipelines.cluster.SchedulerError`, exit 9). A file of complete JSON that is not a scheduler
file (no ``address`` string) is a ConfigError at once (exit 2): waiting cannot make it one.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

log = logging.getLogger(__name__)

#: how often a missing or incomplete scheduler file is read again, seconds
POLL_S = 0.1
#: what a JSON value cut short can end with: the start of a literal (``{"a": tr``) or of a number (``{"a": 17.``)
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_NUMBER = re.compile(r"[-+.eE0-9]+")


def read_scheduler_file(path: str) -> tuple[str, Any]:
    """``("missing" | "empty" | "incomplete", None)`` for a file a scheduler may still be writing, else
    ``("json", value)``; ConfigError for a file that can be read as no JSON however it ends."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return "missing", None
    except OSError as exc:  # a folder, no permission: nothing a scheduler is writing
        raise _not_a_file(path, exc) from None
    if not raw.strip():
        return "empty", None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":  # a character cut at the end
            return "incomplete", None
        raise _not_a_file(path, exc) from None
    try:
        return "json", json.loads(text)
    except json.JSONDecodeError as exc:
        if _cut_short(text, exc):
            return "incomplete", None
        raise _not_a_file(path, exc) from None


def _cut_short(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether ``text`` fails to parse only where it ends: the beginning of a JSON document, not a wrong one."""
    rest = text[exc.pos :].rstrip()
    if exc.msg.startswith("Unterminated string") or not rest or _NUMBER.fullmatch(rest):
        return True
    return any(word.startswith(rest) for word in _LITERALS)


def _not_a_file(path: str, exc: BaseException) -> Exception:
    from curation.config import ConfigError

    return ConfigError(
        f"--scheduler {path}: not a Dask scheduler file ({type(exc).__name__}: {exc}); give the file "
        "`dask scheduler --scheduler-file` writes, or an address tcp://host:8786"
    )


def file_address(path: str, timeout: float) -> str:
    """The address the scheduler file at ``path`` holds, once it exists and holds complete JSON (waited
    for up to ``timeout`` s). SchedulerError when it is still missing or incomplete then, ConfigError at
    once for complete JSON without an address."""
    from pipelines.cluster import SchedulerError

    deadline = time.monotonic() + timeout
    said = False
    while True:
        state, value = read_scheduler_file(path)
        if state == "json":
            return _address(path, value)
        if time.monotonic() >= deadline:
            break
        if not said:
            log.info(
                "--scheduler %s: the scheduler file is %s; waiting up to %g s for `dask scheduler --scheduler-file` "
                "to write it",
                path,
                "not there yet" if state == "missing" else state,
                timeout,
            )
            said = True
        time.sleep(POLL_S)
    start = f"start `dask scheduler --scheduler-file {path}` first"
    if state == "missing":
        raise SchedulerError(
            f"--scheduler {path}: no such scheduler file after waiting {timeout:g} s; {start}, or give its "
            "address tcp://host:8786"
        )
    raise SchedulerError(
        f"--scheduler {path}: the scheduler file is still {state} after {timeout:g} s, so no scheduler is "
        f"writing it; {start} (it writes the file whole once it listens), or give its address tcp://host:8786"
    )


def _address(path: str, value: Any) -> str:
    try:
        address = value["address"]
        if not isinstance(address, str):
            raise TypeError(f"its address is {address!r}")
    except (TypeError, KeyError, IndexError) as exc:
        raise _not_a_file(path, exc) from None
    return address
