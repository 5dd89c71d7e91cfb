"""Connecting to a ``--scheduler``: its address checked before anything runs, then one question
asked of the server there, all within :data:`pipelines.cluster.CONNECT_TIMEOUT_S`.

:func:`check_address` runs for every command that takes ``--scheduler`` (``--dry-run`` included,
which connects to nothing): an empty value, a missing port or an unknown protocol is a ConfigError
(exit 2). :func:`connect` then opens one Dask connection to the address (or to the address in a
scheduler file) and asks the server who it is (Dask's ``identity``) before it makes the client.
distributed's own ``Client(address, timeout=…)`` bounds only the TCP connect: at a server that
accepts and never answers (the scheduler's dashboard, 8787, given for its port, 8786) it waits for
ever, and it reads another server's first bytes as a frame count (a MemoryError, or any error of
its own). Here each of these ends in one line (:class:`pipelines.cluster.SchedulerError`, exit 9):
no answer, not a Dask server, or a Dask worker or nanny instead of the scheduler.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

#: said with every address that is not a scheduler's
PORT_HINT = "give the scheduler's address (port 8786 by default; 8787 is its dashboard)"


def check_address(scheduler: str) -> None:
    """A ConfigError unless ``scheduler`` is ``synchronous``, a scheduler file (``*.json``) or a
    Dask address with a port (``tcp://host:8786``, ``host:8786``); connects to nothing.

    >>> check_address("tcp://10.0.0.1:8786"); check_address("/shared/sched.json"); check_address("synchronous")
    >>> check_address("")
    Traceback (most recent call last):
    curation.errors.ConfigError: --scheduler '': give an address (tcp://host:8786), ...
    """
    from curation.config import ConfigError

    if scheduler == "synchronous" or (scheduler.strip() and scheduler.endswith(".json")):
        return
    if not scheduler.strip():
        raise ConfigError(f"--scheduler {scheduler!r}: give an address (tcp://host:8786), a scheduler file (.json) or "
                          "synchronous; leave out --scheduler for a local cluster")
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(scheduler)
        registry.get_backend(protocol)  # http://… and other protocols Dask does not speak
        if protocol in ("tcp", "tls") and not 0 < parse_host_port(location)[1] < 65536:
            raise ValueError("a port is 1 to 65535")
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"--scheduler {scheduler}: not a Dask scheduler address ({exc}); give tcp://host:8786, a scheduler "
                          "file (.json) or synchronous") from None


def file_address(path: str) -> str:
    """The address a scheduler file holds: SchedulerError when there is no file, ConfigError when it is not one."""
    import os

    from curation.config import ConfigError
    from pipelines.cluster import SchedulerError

    if not os.path.exists(path):
        raise SchedulerError(f"--scheduler {path}: no such scheduler file; start `dask scheduler --scheduler-file {path}` first")
    try:
        with open(path, encoding="utf-8") as f:
            address = json.load(f)["address"]
        if not isinstance(address, str):
            raise TypeError(f"its address is {address!r}")
    except (ValueError, TypeError, KeyError, OSError) as exc:
        raise ConfigError(f"--scheduler {path}: not a Dask scheduler file ({type(exc).__name__}: {exc}); give the file "
                          "`dask scheduler --scheduler-file` writes, or an address tcp://host:8786") from None
    return address


async def _ask(address: str, connect_s: float) -> dict[str, Any]:
    from distributed.comm import connect
    from distributed.security import Security

    comm = await connect(address, timeout=connect_s, **Security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def identify(address: str, timeout: float) -> dict[str, Any]:
    """Dask's ``identity`` of the server at ``address``, asked on an event loop of its own (a caller's
    running loop is left alone) and given up after ``timeout`` s (asyncio.TimeoutError). The TCP
    connect itself gets 0.8 of it, so that an address where nothing accepts ends in the OSError of
    distributed's connect, and one that accepts and never answers in the TimeoutError."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["answer"] = asyncio.run(asyncio.wait_for(_ask(address, 0.8 * timeout), timeout))
        except BaseException as exc:  # noqa: BLE001 -- raised in the caller's thread
            out["error"] = exc

    thread = threading.Thread(target=run, name="curate-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if thread.is_alive():
        raise asyncio.TimeoutError
    if "error" in out:
        raise out["error"]
    return out["answer"]


def check_server(scheduler: str, address: str, timeout: float) -> None:
    """One line (SchedulerError) unless a Dask scheduler answers at ``address`` within ``timeout`` s."""
    from distributed.comm.core import CommClosedError

    from pipelines.cluster import SchedulerError

    where = f"--scheduler {scheduler}" + (f" (address {address})" if address != scheduler else "")
    try:
        answer = identify(address, timeout)
    except (asyncio.TimeoutError, TimeoutError):
        raise SchedulerError(f"{where}: the server there accepted the connection but gave no Dask answer within {timeout:g} s: "
                             f"is that the dashboard's port? {PORT_HINT}") from None
    except CommClosedError as exc:
        raise SchedulerError(f"{where}: the server there closed the connection at Dask's handshake, so it is not a Dask "
                             f"scheduler ({exc}); {PORT_HINT}") from None
    except OSError as exc:
        raise SchedulerError(f"{where}: no Dask scheduler answered within {timeout:g} s ({type(exc).__name__}); check the "
                             "address and that `dask scheduler` runs there, or omit --scheduler for a local cluster") from None
    except Exception as exc:  # noqa: BLE001 -- another server's bytes, read as Dask's frames
        raise SchedulerError(f"{where}: the server there is not a Dask scheduler (its answer is not Dask's: "
                             f"{type(exc).__name__}); {PORT_HINT}") from None
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind != "Scheduler":
        raise SchedulerError(f"{where}: the server there is a Dask {kind or 'server'}, not the scheduler; {PORT_HINT}, "
                             "as `dask scheduler` prints it (Scheduler at: tcp://…)")


def connect(scheduler: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``scheduler`` (an address or a scheduler file),
    once :func:`check_server` has heard it answer as one."""
    from distributed import Client

    from pipelines import cluster

    check_address(scheduler)
    timeout = cluster.CONNECT_TIMEOUT_S
    is_file = scheduler.endswith(".json")
    check_server(scheduler, file_address(scheduler) if is_file else scheduler, timeout)
    try:
        return Client(scheduler_file=scheduler, timeout=timeout) if is_file else Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:  # it answered a moment ago: gone since
        raise cluster.SchedulerError(f"--scheduler {scheduler}: the scheduler stopped answering while the client connected "
                                     f"({type(exc).__name__}); check that `dask scheduler` runs there") from None
