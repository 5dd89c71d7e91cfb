"""A `--scheduler` that is not what the user thinks: a port that accepts and never answers (a
dashboard's), a server that is not Dask, a worker's port, workers too small to run a task, an empty
or malformed address. Each ends in one line before anything runs (a hang, exit 70 with a traceback,
or a run waiting for ever before). Real servers on 127.0.0.1: loopback sockets, `dask scheduler`
and `dask worker` processes."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pipelines.cluster
from pipelines.cli import main
from tests.pipelines.test_cluster import REPO, _stop

WEB = str(REPO / "sample_data" / "web")
RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")


class _Server:
    """A loopback TCP server that accepts every connection and answers ``reply`` (nothing: never answers), keeping it open."""

    def __init__(self, reply: bytes = b"") -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.reply, self.conns = reply, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.reply:
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


def _ingest(tmp_path: Path, scheduler: str, *extra: str) -> int:
    return main(["ingest", "--input", WEB, "--output", str(tmp_path / "out"), "--scheduler", scheduler, "--quiet", *extra])


@pytest.fixture
def short_connect(monkeypatch):
    monkeypatch.setattr(pipelines.cluster, "CONNECT_TIMEOUT_S", 2)


def _errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_port_that_accepts_and_never_answers_ends_within_the_timeout(tmp_path, caplog, short_connect):
    """The dashboard's port given for the scheduler's: distributed's connect waited for ever on its handshake."""
    server = _Server()
    sched_file = tmp_path / "sched.json"
    sched_file.write_text(json.dumps({"type": "Scheduler", "address": server.address}))
    try:
        for scheduler in (server.address, str(sched_file)):
            caplog.clear()
            start = time.monotonic()
            assert _ingest(tmp_path, scheduler) == 9
            assert time.monotonic() - start < 8
            (line,) = _errors(caplog)
            assert f"--scheduler {scheduler}" in line and "accepted the connection but gave no Dask answer within 2 s" in line
            assert "dashboard" in line and "8786" in line
    finally:
        server.close()
    assert not (tmp_path / "out").exists()


def test_a_server_that_is_not_dask_is_one_line_exit_9(tmp_path, caplog, short_connect):
    """An HTTP answer read as Dask's frame count was a MemoryError: exit 70 and a page of traceback."""
    server = _Server(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)
    try:
        assert _ingest(tmp_path, server.address) == 9
    finally:
        server.close()
    (line,) = _errors(caplog)
    assert f"--scheduler {server.address}: the server there is not a Dask scheduler" in line and "8786" in line
    assert "internal error" not in caplog.text and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("scheduler", "said"), [
    ("", "--scheduler '': give an address (tcp://host:8786)"),
    ("  ", "give an address"),
    ("sync", "--scheduler sync: not a Dask scheduler address"),
    ("tcp://127.0.0.1", "not a Dask scheduler address"),
    ("http://127.0.0.1:8786", "not a Dask scheduler address"),
    ("tcp://h:notaport", "not a Dask scheduler address"),
    ("tcp://127.0.0.1:0", "a port is 1 to 65535"),  # these waited 15 s for an OSError
    ("tcp://127.0.0.1:99999", "a port is 1 to 65535"),
])
def test_a_bad_address_is_exit_2_in_a_dry_run_too(tmp_path, caplog, scheduler, said):
    for dry in (["--dry-run"], []):
        caplog.clear()
        assert main(["run", RECIPE, "--input", WEB, "--output", str(tmp_path / "run"), "--scheduler", scheduler, "--quiet", *dry]) == 2
        assert said in caplog.text
    assert not (tmp_path / "run").exists()


def test_a_dry_run_connects_to_nothing(tmp_path, capsys):
    assert main(["run", RECIPE, "--input", WEB, "--output", str(tmp_path / "run"), "--scheduler", "tcp://127.0.0.1:1", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["scheduler"]["name"] == "tcp://127.0.0.1:1"


def test_open_client_with_an_empty_address_starts_no_cluster():
    from curation.config import ConfigError

    with pytest.raises(ConfigError, match="give an address"), pipelines.cluster.open_client(""):
        pass


def _tiny_cluster(tmp_path: Path) -> tuple[dict, list[subprocess.Popen]]:
    """`dask scheduler` (with its dashboard) and one `dask worker --memory-limit 300MB`; the scheduler file's contents."""
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)]
    deadline = time.time() + 30
    while not sched_file.exists() and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.2)  # written whole
    info = json.loads(sched_file.read_text())
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", info["address"], "--nthreads", "1",
                                   "--memory-limit", "300MB", "--local-directory", str(tmp_path / "w")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd=REPO))
    return info, procs


@pytest.mark.slow
def test_a_real_clusters_dashboard_worker_port_and_small_workers_are_one_line(tmp_path, caplog, short_connect):
    from distributed import Client

    info, procs = _tiny_cluster(tmp_path)
    try:
        with Client(info["address"], timeout=30) as c:
            c.wait_for_workers(1, timeout=30)
            (worker,) = c.scheduler_info()["workers"]
        dashboard = f"tcp://127.0.0.1:{info['services']['dashboard']}"
        said = {dashboard: "gave no Dask answer within 2 s: is that the dashboard's port?",
                worker: "the server there is a Dask Worker, not the scheduler",
                # the run waited for ever with its workers paused, its hint naming ingest.blocksize_mb
                info["address"]: "every worker has a memory limit under 640 MiB (" + worker + ": 286 MiB)"}
        for address, message in said.items():
            caplog.clear()
            start = time.monotonic()
            assert _ingest(tmp_path, address) == 9, address
            assert time.monotonic() - start < 20
            (line,) = _errors(caplog)
            assert message in line, line
    finally:
        _stop(procs)
    assert "dask worker --memory-limit 1GB" in line and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_workers_paused_while_idle_are_told_to_get_more_memory():
    """Every worker paused with no task and no data: lowering ingest.blocksize_mb cannot help."""
    import dask
    from distributed import Client, LocalCluster

    from pipelines.worker_loss import stalled

    # a bare worker process holds ~65 MB: paused at 5 % of 1 GB (50 MB), never terminated
    memory = {"distributed.worker.memory.pause": 0.05, "distributed.worker.memory.terminate": False,
              "distributed.worker.memory.target": False, "distributed.worker.memory.spill": False}
    with (dask.config.set(memory), LocalCluster(n_workers=1, threads_per_worker=1, memory_limit="1GB", dashboard_address=":0") as lc,
          Client(lc) as client):
        deadline = time.monotonic() + 20
        while not str(next(iter(client.scheduler_info()["workers"].values()))["status"]).endswith("paused"):
            assert time.monotonic() < deadline, "the worker did not pause"
            time.sleep(0.2)
        why = stalled(client)
    assert "paused at their memory limit" in why and "running no task and holding no data" in why
    assert "give the workers more memory" in why and "blocksize_mb" not in why


@pytest.mark.slow
def test_a_worker_lost_mid_step_is_one_warning_and_steps_log_no_client_error(caplog):
    """A handler of the scheduler's ``all`` events, unsubscribed after each step, made the client log 'No
    event handler known for topic all' with a traceback for later events of a normal run (a real mix,
    12 tracebacks); the workers are compared between polls and when the step ends instead."""
    from distributed import Client, LocalCluster

    from pipelines.worker_loss import watch_workers

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as lc, Client(lc) as client:
        with caplog.at_level(logging.INFO):
            for step in ("demo: first", "demo: second"):  # steps with no loss: nothing said
                with watch_workers(client, step):
                    client.gather(client.map(time.sleep, [0.2, 0.2], pure=False))
            futures = client.map(time.sleep, [2.0, 2.0, 2.0, 2.0], pure=False)
            with watch_workers(client, "demo: step"):
                time.sleep(0.8)
                victim = sorted(client.scheduler_info()["workers"])[0]
                os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)  # its nanny starts another
                client.gather(futures)  # Dask runs the lost worker's tasks again
                time.sleep(0.5)
            with watch_workers(client, "demo: after"):
                client.gather(client.map(time.sleep, [0.2, 0.2], pure=False))
        said = [r.getMessage() for r in caplog.records if "left the cluster" in r.getMessage()]
        assert len(said) == 1 and said[0].startswith(f"demo: step: the worker {victim} left the cluster mid-step")
    assert len([r for r in caplog.records if "left the cluster" in r.getMessage()]) == 1  # closing the cluster is not a loss
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("distributed")], caplog.text[-2000:]


def test_more_workers_than_cores_is_said(caplog):
    cores = os.cpu_count() or 1
    with caplog.at_level(logging.WARNING), pipelines.cluster.open_client(None, workers=cores + 1) as client:
        assert len(client.scheduler_info()["workers"]) == cores + 1
    assert f"{cores + 1} workers on {cores} cores: the workers beyond one per core share the cores" in caplog.text


def test_some_small_workers_are_a_warning_all_of_them_a_refusal(caplog):
    from pipelines.cluster import SchedulerError
    from pipelines.cluster_env import check_memory

    with caplog.at_level(logging.WARNING):
        check_memory("tcp://h:8786", {"tcp://h:1": 300_000_000, "tcp://h:2": 4 << 30, "tcp://h:3": 0})
    assert "1 of 3 workers have a memory limit under 640 MiB (tcp://h:1: 286 MiB)" in caplog.text
    with pytest.raises(SchedulerError, match="every worker has a memory limit under 640 MiB"):
        check_memory("tcp://h:8786", {"tcp://h:1": 300_000_000, "tcp://h:2": (640 << 20) - 1})
