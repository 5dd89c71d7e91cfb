"""A `--scheduler` whose protocol this machine cannot use, and a scheduler file whose address is not
one: said for what they are, before anything runs (`--dry-run` included), not as "the server there
is not a Dask scheduler". A real `dask scheduler` (plain TCP) on 127.0.0.1 where one is needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dask
import pytest

import pipelines.cluster
from pipelines.cli import main
from tests.pipelines.test_cluster import REPO, _stop
from tests.pipelines.test_scheduler_connect import _errors, _Server

WEB = str(REPO / "sample_data" / "web")
RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory) -> str:
    """The address of a real `dask scheduler` without TLS (no workers: nothing here gets as far as running)."""
    sched_file = tmp_path_factory.mktemp("sched") / "scheduler.json"
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                             "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(sched_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        deadline = time.time() + 30
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)  # written whole
        yield json.loads(sched_file.read_text())["address"]
    finally:
        _stop([proc])


def _run(tmp_path: Path, scheduler: str, *extra: str) -> int:
    return main(["run", RECIPE, "--input", WEB, "--output", str(tmp_path / "run"), "--scheduler", scheduler, "--quiet", *extra])


def _both(tmp_path: Path, caplog, scheduler: str) -> list[tuple[int, str]]:
    """(exit code, the one error line) of a dry run and of a real run with ``scheduler``."""
    out = []
    for dry in (["--dry-run"], []):
        caplog.clear()
        code = _run(tmp_path, scheduler, *dry)
        (line,) = _errors(caplog)
        out.append((code, line))
    assert not (tmp_path / "run").exists()
    return out


def test_tls_at_a_scheduler_without_tls_config_names_the_settings(tmp_path, caplog, scheduler):
    """tls:// without TLS settings was 'the server there is not a Dask scheduler' (a TypeError of distributed's), exit 9."""
    port = scheduler.rsplit(":", 1)[1]
    for code, line in _both(tmp_path, caplog, f"tls://127.0.0.1:{port}"):
        assert code == 2, line
        assert line.startswith(f"--scheduler tls://127.0.0.1:{port}: tls:// asks for TLS and this machine's Dask config has no TLS")
        assert "distributed.comm.tls.ca-file" in line and "distributed.comm.tls.client.cert" in line
        assert "a scheduler without TLS is tcp://host:port" in line and "--scheduler-file" in line
        assert "not a Dask scheduler" not in line


def test_tls_with_settings_at_a_scheduler_without_tls_is_a_failed_handshake(tmp_path, caplog, scheduler):
    """With a client certificate configured, the handshake's SSLError was 'closed the connection: not a Dask scheduler'."""
    from distributed.security import Security

    sec = Security.temporary()  # a CA and certificate in memory: what a TLS cluster's config would hold
    tls = {"distributed.comm.tls.ca-file": sec.tls_ca_file, "distributed.comm.tls.client.cert": sec.tls_client_cert,
           "distributed.comm.tls.client.key": sec.tls_client_key}
    address = "tls://" + scheduler.split("://", 1)[1]
    with dask.config.set(tls):
        assert _run(tmp_path, address, "--dry-run") == 0  # settings present: nothing to say before connecting
        caplog.clear()
        assert _run(tmp_path, address) == 9
    (line,) = _errors(caplog)
    assert line.startswith(f"--scheduler {address}: the TLS handshake failed (") and "does not speak TLS" in line
    assert "a scheduler without TLS is tcp://host:port" in line and "not a Dask scheduler" not in line
    assert not (tmp_path / "run").exists()


def test_ucx_without_distributed_ucxx_says_so(tmp_path, caplog, scheduler):
    pytest.importorskip("distributed.comm.ucx")  # distributed's stub for ucx://, which raises on use
    if "distributed_ucxx" in sys.modules or __import__("importlib.util").util.find_spec("distributed_ucxx"):
        pytest.skip("distributed-ucxx is installed")
    address = "ucx://" + scheduler.split("://", 1)[1]
    for code, line in _both(tmp_path, caplog, address):
        assert code == 2, line
        assert line.startswith(f"--scheduler {address}: the ucx protocol needs the distributed-ucxx package")
        assert "not installed" in line and "not a Dask scheduler" not in line


@pytest.mark.parametrize(("address", "said"), [
    ("tcp://127.0.0.1:0", "a port is 1 to 65535"),  # each was connected to, a wait of up to 15 s
    ("tcp://127.0.0.1:99999", "a port is 1 to 65535"),
    ("tcp://:8786", "no host"),
    ("tcp://127.0.0.1", "missing port"),
    ("http://127.0.0.1:8786", "unknown address scheme 'http'"),
    ("inproc://127.0.0.1/1/1", "inside one process only"),
])
def test_a_scheduler_files_address_is_checked_like_an_address(tmp_path, caplog, address, said):
    sched_file = tmp_path / "sched.json"
    sched_file.write_text(json.dumps({"type": "Scheduler", "address": address}))
    for code, line in _both(tmp_path, caplog, str(sched_file)):
        assert code == 2, line
        assert line.startswith(f"--scheduler {sched_file} (the scheduler file's address {address}): not a Dask scheduler "
                               f"address (") and said in line, line


def test_a_scheduler_files_tls_address_without_tls_config_names_the_file(tmp_path, caplog, scheduler):
    sched_file = tmp_path / "sched.json"
    address = "tls://" + scheduler.split("://", 1)[1]
    sched_file.write_text(json.dumps({"type": "Scheduler", "address": address}))
    for code, line in _both(tmp_path, caplog, str(sched_file)):
        assert code == 2 and line.startswith(f"--scheduler {sched_file} (the scheduler file's address {address}): tls://")
        assert "distributed.comm.tls.client.cert" in line and "the scheduler that wrote this file listens with TLS" in line


def test_a_dry_run_says_a_missing_scheduler_file_like_a_run(tmp_path, caplog, monkeypatch):
    """A dry run with a scheduler file that does not exist printed its plan and exit 0."""
    monkeypatch.setattr(pipelines.cluster, "CONNECT_TIMEOUT_S", 1)  # how long each waits for the file to appear
    missing = tmp_path / "missing.json"
    said = (f"--scheduler {missing}: no such scheduler file after waiting 1 s; start `dask scheduler --scheduler-file "
            f"{missing}` first, or give its address tcp://host:8786")
    assert _both(tmp_path, caplog, str(missing)) == [(9, said), (9, said)]


def test_a_scheduler_files_sound_address_is_still_asked(tmp_path, caplog, scheduler, capsys):
    """A file with a good address passes the check: a dry run prints its plan, a server there that is not Dask is said."""
    sched_file = tmp_path / "sched.json"
    sched_file.write_text(json.dumps({"type": "Scheduler", "address": scheduler}))
    assert _run(tmp_path, str(sched_file), "--dry-run") == 0
    assert json.loads(capsys.readouterr().out)["scheduler"]["name"] == str(sched_file)
    server = _Server(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)
    sched_file.write_text(json.dumps({"type": "Scheduler", "address": server.address}))
    try:
        caplog.clear()
        assert _run(tmp_path, str(sched_file)) == 9
    finally:
        server.close()
    (line,) = _errors(caplog)
    assert line.startswith(f"--scheduler {sched_file} (address {server.address}): the server there is not a Dask scheduler")
