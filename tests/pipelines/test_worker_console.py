"""The embedded LocalCluster's workers log like the command: a line a task logs on a worker reaches
the command's stderr once, in the command's format, at the command's level (INFO; WARNING with
``--quiet``); a ``--scheduler``'s workers keep their own logging."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cluster import open_client

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

#: a command: the CLI's console set up, a 1-worker LocalCluster, and a task that logs from the LLM
#: judge's retry log (INFO, a stage's module) and a stage's logger (WARNING) on the worker
COMMAND = """
import logging, sys
from pipelines.cluster import open_client
from pipelines.console_log import configure_console

def task():
    from classifiers.annotation.retry_log import RetryLog
    RetryLog("http://judge.test/v1", {}).retried("http_503", "HTTP 503: overloaded", attempt=0, delay=1.0)
    logging.getLogger("pipelines.stages.edu_score").warning("edu_score: a warning from the worker")
    logging.getLogger("distributed.worker").error("a Dask error on the worker")
    import os
    return os.getpid()

if __name__ == "__main__":
    configure_console(quiet=sys.argv[1] == "quiet")
    with open_client(workers=1) as client:
        print("task ran in another process:", client.submit(task).result() != __import__("os").getpid(), flush=True)
"""

INFO = re.compile(
    r"^\d\d:\d\d:\d\d INFO classifiers\.annotation\.openai: request to http://judge\.test/v1: http_503 \(HTTP 503: overloaded\), retry 1 in 1\.00s"
)
DASK = re.compile(r"^\d\d:\d\d:\d\d ERROR distributed\.worker: a Dask error on the worker$")
WARNING = re.compile(r"^\d\d:\d\d:\d\d WARNING pipelines\.stages\.edu_score: edu_score: a warning from the worker$")


def _command(mode: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", COMMAND, mode], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "task ran in another process: True"
    return done.stderr.splitlines()


@pytest.mark.parametrize("mode", ["", "quiet"])
def test_a_workers_log_lines_reach_the_command_once_in_its_format_and_at_its_level(mode):
    lines = _command(mode)
    assert [bool(INFO.match(line)) for line in lines].count(True) == (0 if mode == "quiet" else 1), lines
    assert [bool(WARNING.match(line)) for line in lines].count(True) == 1, lines
    assert sum("a warning from the worker" in line for line in lines) == 1, lines  # not a bare copy as well
    assert sum("http://judge.test/v1" in line for line in lines) == (0 if mode == "quiet" else 1), lines
    assert [bool(DASK.match(line)) for line in lines].count(True) == 1, lines  # Dask's own handler: the same format
    assert sum("a Dask error on the worker" in line for line in lines) == 1, lines


def _logging_of(dask_worker=None) -> tuple[list[str], list[str], int]:
    root = logging.getLogger()
    return sorted(dask_worker.plugins), [type(h).__name__ for h in root.handlers], root.level


def test_a_scheduler_clusters_workers_keep_their_own_logging():
    from distributed import LocalCluster

    from pipelines.cluster_plugin import ReleaseMemory, WorkerConsole

    root = logging.getLogger()
    before = ([type(h).__name__ for h in root.handlers], root.level)
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", dashboard_address=":0"
        ) as cluster,
        open_client(cluster.scheduler_address) as client,
    ):
        ((plugins, handlers, level),) = client.run(_logging_of).values()
    assert ReleaseMemory.name in plugins and WorkerConsole.name not in plugins
    assert (handlers, level) == before
