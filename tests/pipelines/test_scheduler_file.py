"""A `--scheduler` file that `dask scheduler --scheduler-file` has not written yet, or not whole: a
batch script that starts the scheduler and curate at once. curate waits for it, up to the connect
timeout, saying once that it waits; a file of complete JSON that is not a scheduler file is still one
line at once (exit 2). Files written in two halves by a thread, and a real `dask scheduler` and
`dask worker` started after curate, on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pipelines.cluster
from pipelines.cli import main
from pipelines.scheduler_file import read_scheduler_file
from tests.pipelines.test_cluster import REPO, _stop

WEB = str(REPO / "sample_data" / "web")
RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")
WAITS = "the scheduler file is"


@pytest.fixture
def short_connect(monkeypatch):
    monkeypatch.setattr(pipelines.cluster, "CONNECT_TIMEOUT_S", 3)


def _dry_run(tmp_path: Path, scheduler: str, capsys) -> tuple[int, str]:
    """(exit code, the scheduler the plan names) of `curate run --dry-run --scheduler FILE`."""
    code = main(
        ["run", RECIPE, "--input", WEB, "--output", str(tmp_path / "run"), "--scheduler", scheduler, "--dry-run"]
    )
    out = capsys.readouterr().out
    return code, json.loads(out)["scheduler"]["name"] if code == 0 else ""


def _write_once_waited(path: Path, text: str) -> threading.Thread:
    """A thread that appends ``text`` to ``path`` 0.5 s after curate says it waits for the file (after 60 s if it never does)."""
    waits = threading.Event()

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if WAITS in record.getMessage():
                waits.set()

    handler = Said()
    logging.getLogger("pipelines.scheduler_file").addHandler(handler)

    def write() -> None:
        waits.wait(60)
        logging.getLogger("pipelines.scheduler_file").removeHandler(handler)
        time.sleep(0.5)
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _lines(caplog, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level]


#: what `dask scheduler --scheduler-file` writes (json.dump of its identity, indent 2), with literals of each kind
SCHEDULER_FILE = json.dumps(
    {
        "type": "Scheduler",
        "id": "Scheduler-5d0f",
        "address": "tcp://127.0.0.1:8786",
        "services": {"dashboard": 8787},
        "started": 1765112345.25,
        "n_workers": 0,
        "total_threads": 0,
        "total_memory": 0,
        "workers": {},
        "flags": [True, False, None, -1.5e-3],
    },
    indent=2,
)


@pytest.mark.parametrize(
    "first",
    ["", SCHEDULER_FILE[:1], SCHEDULER_FILE[:40], SCHEDULER_FILE[: len(SCHEDULER_FILE) // 2]],
    ids=["empty", "one-character", "in-a-string", "half"],
)
def test_a_scheduler_file_written_in_two_halves_is_waited_for(tmp_path, caplog, capsys, short_connect, first):
    """An empty or half-written file was exit 2 'not a Dask scheduler file' at once."""
    caplog.set_level(logging.INFO)
    sched_file = tmp_path / "sched.json"
    sched_file.write_text(first)
    writer = _write_once_waited(sched_file, SCHEDULER_FILE[len(first) :])
    assert _dry_run(tmp_path, str(sched_file), capsys) == (0, str(sched_file))
    assert not writer.is_alive()  # read once the second half was there
    (said,) = [line for line in _lines(caplog, logging.INFO) if WAITS in line]
    state = "empty" if not first else "incomplete"
    assert said == (
        f"--scheduler {sched_file}: the scheduler file is {state}; waiting up to 3 s for "
        "`dask scheduler --scheduler-file` to write it"
    )
    assert not _lines(caplog, logging.ERROR)


def test_every_beginning_of_a_scheduler_file_is_waited_for():
    """Wherever the scheduler's write is cut (inside a string, a number, true/false/null), the file reads as not yet written."""
    path = "unused"
    for cut in range(len(SCHEDULER_FILE)):
        text = SCHEDULER_FILE[:cut]
        state, _ = _read_text(path, text)
        assert state in ("empty", "incomplete"), (cut, text[-20:])
    assert _read_text(path, SCHEDULER_FILE)[1]["address"] == "tcp://127.0.0.1:8786"


def _read_text(path: str, text: str) -> tuple[str, object]:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        return read_scheduler_file(f.name)
    finally:
        os.unlink(f.name)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"type": "Scheduler"}', "(KeyError: 'address')"),
        ('{"address": 8786}', "(TypeError: its address is 8786)"),
        ("[1, 2]", "(TypeError: list indices must be integers or slices, not str)"),
        ("scheduler: tcp://127.0.0.1:8786\n", "(JSONDecodeError: Expecting value: line 1 column 1 (char 0))"),
        ('{"address": "tcp://127.0.0.1:8786"}}', "(JSONDecodeError: Extra data"),
    ],
)
def test_complete_json_that_is_not_a_scheduler_file_is_one_line_at_once(tmp_path, caplog, text, said):
    """Waiting cannot make these a scheduler file: exit 2 at once, without the line that says it waits."""
    caplog.set_level(logging.INFO)
    sched_file = tmp_path / "sched.json"
    sched_file.write_text(text)
    code = main(
        ["run", RECIPE, "--input", WEB, "--output", str(tmp_path / "run"), "--scheduler", str(sched_file), "--dry-run"]
    )
    assert code == 2
    (line,) = _lines(caplog, logging.ERROR)
    assert line.startswith(f"--scheduler {sched_file}: not a Dask scheduler file {said}"), line
    assert not any(WAITS in m for m in _lines(caplog, logging.INFO))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            None,
            "no such scheduler file after waiting 3 s; start `dask scheduler --scheduler-file {f}` first, or give its "
            "address tcp://host:8786",
        ),
        (
            "",
            "the scheduler file is still empty after 3 s, so no scheduler is writing it; start `dask scheduler "
            "--scheduler-file {f}` first",
        ),
        (SCHEDULER_FILE[:30], "the scheduler file is still incomplete after 3 s"),
    ],
    ids=["missing", "empty", "incomplete"],
)
def test_a_file_still_missing_or_incomplete_after_the_timeout_says_what_to_start(
    tmp_path, caplog, short_connect, text, said
):
    sched_file = tmp_path / "sched.json"
    if text is not None:
        sched_file.write_text(text)
    caplog.set_level(logging.INFO)
    for dry in (["--dry-run"], []):
        caplog.clear()
        code = main(
            [
                "run",
                RECIPE,
                "--input",
                WEB,
                "--output",
                str(tmp_path / "run"),
                "--scheduler",
                str(sched_file),
                "--quiet",
                *dry,
            ]
        )
        assert code == 9
        (waits,) = [r for r in caplog.records if WAITS in r.getMessage() and r.levelno == logging.INFO]
        (error,) = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert error.getMessage().startswith(f"--scheduler {sched_file}: " + said.format(f=sched_file)), (
            error.getMessage()
        )
        assert 2.9 < error.created - waits.created < 5  # the timeout, from the first read
    assert not (tmp_path / "run").exists()


def _python(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], start_new_session=True, **kw)


@pytest.mark.slow
def test_curate_started_before_its_scheduler_waits_for_the_file_and_runs(tmp_path):
    """`dask scheduler --scheduler-file` and `dask worker` started once curate waits, as in a batch script
    that starts the three at once. It was exit 9 'no such scheduler file' at once."""
    sched_file = tmp_path / "sched.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    out = tmp_path / "ingest"
    args = ["ingest", "--input", WEB, "--output", str(out), "--scheduler", str(sched_file)]
    curate = _python(
        "-m", "pipelines.cli", *args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    waits = threading.Event()

    def read() -> None:
        for line in curate.stdout:
            lines.append(line)
            if WAITS in line:
                waits.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = []
    try:
        assert waits.wait(120), "".join(lines)
        procs.append(
            _python(
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(sched_file),
                **quiet,
            )
        )
        procs.append(
            _python(
                "-m",
                "distributed.cli.dask_worker",
                "--scheduler-file",
                str(sched_file),
                "--nthreads",
                "1",
                "--memory-limit",
                "2GB",
                "--local-directory",
                str(tmp_path / "w"),
                cwd=REPO,
                **quiet,
            )
        )
        curate.wait(timeout=300)
        reader.join(10)
    finally:
        if curate.poll() is None:
            os.killpg(curate.pid, signal.SIGKILL)
        _stop(procs)
    output = "".join(lines)
    assert curate.returncode == 0, output
    assert f"--scheduler {sched_file}: the scheduler file is not there yet; waiting up to 15 s" in output
    assert " ERROR " not in output and (out / "_SUCCESS").exists()
