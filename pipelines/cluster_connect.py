"""Connecting to a ``--scheduler``: its address checked before anything runs, then one question
asked of the server there, all within :data:`pipelines.cluster.CONNECT_TIMEOUT_S`.

:func:`check_address` runs for every command that takes ``--scheduler`` (``--dry-run`` included,
which connects to nothing). An address, or the address a scheduler file holds (read there, waited for while the file is
missing, empty or half-written: :mod:`pipelines.scheduler_file`), is a ConfigError (exit 2) without a host, without a port of 1 to
65535, of a protocol Dask does not speak from another process (``http://``, ``inproc://``), of
``ucx://`` without the ``distributed-ucxx`` package, of ``tls://``/``wss://`` without this machine's
Dask TLS settings for a client, or of a protocol without TLS where Dask's config requires encryption.
:func:`connect` then opens one Dask connection to the address and asks the server who it is (Dask's
``identity``) before it makes the client. distributed's own ``Client(address, timeout=…)`` bounds
only the TCP connect: at a server that accepts and never answers (the scheduler's dashboard, 8787,
given for its port, 8786) it waits for ever, and it reads another server's first bytes as a frame
count (a MemoryError, or any error of its own). Here each of these ends in one line
(:class:`pipelines.cluster.SchedulerError`, exit 9): no answer, not a Dask server, a TLS handshake
that fails, or a Dask worker or nanny instead of the scheduler.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

#: said with every address that is not a scheduler's
PORT_HINT = "give the scheduler's address (port 8786 by default; 8787 is its dashboard)"


#: the Dask config keys of a client's TLS settings, said when a ``tls://`` address has none
TLS_KEYS = ("distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and distributed.comm.tls.client.key "
            "(DASK_DISTRIBUTED__COMM__TLS__CA_FILE, …__CLIENT__CERT, …__CLIENT__KEY)")
#: how to give the address of a scheduler that runs without TLS
PLAIN_HINT = ("a scheduler without TLS is tcp://host:port, as `dask scheduler` prints it, or give the file its "
              "--scheduler-file writes (it holds the scheduler's address, tcp:// or tls://)")


def check_address(scheduler: str) -> str:
    """The address to connect to: ``scheduler`` itself, or the address its scheduler file (``*.json``)
    holds; ``synchronous`` as it is. A ConfigError unless the address has a host, a port of 1 to 65535
    and a protocol this machine can use (:func:`check_protocol`); connects to nothing.

    >>> check_address("tcp://10.0.0.1:8786"), check_address("10.0.0.1:8786"), check_address("synchronous")
    ('tcp://10.0.0.1:8786', '10.0.0.1:8786', 'synchronous')
    >>> check_address("")
    Traceback (most recent call last):
    curation.errors.ConfigError: --scheduler '': give an address (tcp://host:8786), ...
    >>> check_address("tcp://:8786")
    Traceback (most recent call last):
    curation.errors.ConfigError: --scheduler tcp://:8786: not a Dask scheduler address (no host); ...
    """
    from curation.config import ConfigError

    if scheduler == "synchronous":
        return scheduler
    if not scheduler.strip():
        raise ConfigError(f"--scheduler {scheduler!r}: give an address (tcp://host:8786), a scheduler file (.json) or "
                          "synchronous; leave out --scheduler for a local cluster")
    if not scheduler.endswith(".json"):
        check_protocol(scheduler, f"--scheduler {scheduler}", "give tcp://host:8786, a scheduler file (.json) or synchronous",
                       PLAIN_HINT)
        return scheduler
    from pipelines import cluster
    from pipelines.scheduler_file import file_address

    address = file_address(scheduler, cluster.CONNECT_TIMEOUT_S)  # waited for while `dask scheduler` writes it
    check_protocol(address, f"--scheduler {scheduler} (the scheduler file's address {address})",
                   "give the file `dask scheduler --scheduler-file` writes, or an address tcp://host:8786",
                   "the scheduler that wrote this file listens with TLS")
    return address


def check_protocol(address: str, where: str, hint: str, tls_hint: str = PLAIN_HINT) -> None:
    """A ConfigError (``where: …; hint``, ``tls_hint`` for TLS) unless ``address`` is host:port of a protocol this machine
    can use: ``ucx://`` needs distributed-ucxx, ``tls://`` and ``wss://`` a client's TLS settings in
    Dask's config, and where that config requires encryption, every address is one of these two."""
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address, parse_host_port

    from curation.config import ConfigError

    try:
        protocol, location = parse_address(address)
        if protocol == "inproc":
            raise ValueError("inproc:// reaches a scheduler inside one process only")
        ucx_missing = protocol == "ucx" and type(registry.backends.get("ucx")).__module__ in ("distributed.comm.ucx", "builtins")
        if not ucx_missing:  # distributed's own ucx backend is a stub that raises on use
            registry.get_backend(protocol)  # http://… and other protocols Dask does not speak
        host, port = parse_host_port(location)
        if not host:
            raise ValueError("no host")
        if not 0 < port < 65536:
            raise ValueError("a port is 1 to 65535")
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: not a Dask scheduler address ({exc}); {hint}") from None
    if ucx_missing:
        raise ConfigError(f"{where}: the ucx protocol needs the distributed-ucxx package (distributed-ucxx-cu12 or -cu13 "
                          "from PyPI, distributed-ucxx from conda-forge), which is not installed here; install it where the "
                          "client, the scheduler and every worker run, or give the scheduler's tcp:// address")
    _check_security(protocol, where, tls_hint)


def _check_security(protocol: str, where: str, tls_hint: str) -> None:
    import ssl

    from distributed.security import Security

    from curation.config import ConfigError

    try:
        security = Security()
        context = security.get_connection_args("client")["ssl_context"] if protocol in ("tls", "wss") else None
    except (OSError, ValueError, TypeError, ssl.SSLError) as exc:  # a certificate file missing or not one
        raise ConfigError(f"{where}: Dask's TLS settings for a client cannot be loaded ({type(exc).__name__}: {exc}); "
                          f"check {TLS_KEYS}") from None
    if protocol in ("tls", "wss") and context is None:
        raise ConfigError(f"{where}: {protocol}:// asks for TLS and this machine's Dask config has no TLS settings for a "
                          f"client: set {TLS_KEYS} to the CA and a certificate the scheduler accepts (`dask scheduler "
                          f"--tls-ca-file … --tls-cert … --tls-key …`); {tls_hint}")
    if protocol not in ("tls", "wss") and security.require_encryption:
        raise ConfigError(f"{where}: Dask's config requires encryption (distributed.comm.require-encryption) and {protocol}:// "
                          "has none: give the tls:// address of a scheduler that listens with TLS")


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
    from pipelines.cluster import SchedulerError

    where = f"--scheduler {scheduler}" + (f" (address {address})" if address != scheduler else "")
    try:
        answer = identify(address, timeout)
    except Exception as exc:  # noqa: BLE001 -- each said in one line
        raise SchedulerError(f"{where}: {_failure(exc, address, timeout)}") from None
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind != "Scheduler":
        raise SchedulerError(f"{where}: the server there is a Dask {kind or 'server'}, not the scheduler; {PORT_HINT}, "
                             "as `dask scheduler` prints it (Scheduler at: tcp://…)")


def _failure(exc: Exception, address: str, timeout: float) -> str:
    """What :func:`identify`'s ``exc`` says of the server at ``address``."""
    import ssl

    from distributed.comm.core import CommClosedError

    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return (f"the server there accepted the connection but gave no Dask answer within {timeout:g} s: is that the "
                f"dashboard's port? {PORT_HINT}")
    why = exc.__cause__ if isinstance(exc.__cause__, ssl.SSLError) else exc
    # tls:// at a server without TLS (an SSLError, or tornado's ValueError where its Dask handshake came first), or at one
    # that refuses this machine's certificate
    if address.startswith(("tls://", "wss://")) and (isinstance(why, ssl.SSLError) or "SSL" in str(exc)):
        return (f"the TLS handshake failed ({type(why).__name__}: {why}): the server there does not speak TLS or does not "
                f"accept this machine's certificate ({TLS_KEYS}); {PLAIN_HINT}")
    if isinstance(exc, CommClosedError):
        return f"the server there closed the connection at Dask's handshake, so it is not a Dask scheduler ({exc}); {PORT_HINT}"
    if isinstance(exc, OSError):
        return (f"no Dask scheduler answered within {timeout:g} s ({type(exc).__name__}); check the address and that "
                "`dask scheduler` runs there, or omit --scheduler for a local cluster")
    # another server's bytes, read as Dask's frames
    return f"the server there is not a Dask scheduler (its answer is not Dask's: {type(exc).__name__}); {PORT_HINT}"


def connect(scheduler: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``scheduler`` (an address or a scheduler file),
    once :func:`check_server` has heard it answer as one."""
    from distributed import Client

    from pipelines import cluster

    address = check_address(scheduler)
    timeout = cluster.CONNECT_TIMEOUT_S
    is_file = scheduler.endswith(".json")
    check_server(scheduler, address, timeout)
    try:
        return Client(scheduler_file=scheduler, timeout=timeout) if is_file else Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:  # it answered a moment ago: gone since
        raise cluster.SchedulerError(f"--scheduler {scheduler}: the scheduler stopped answering while the client connected "
                                     f"({type(exc).__name__}); check that `dask scheduler` runs there") from None
