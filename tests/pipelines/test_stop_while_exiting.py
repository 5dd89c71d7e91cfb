"""A Ctrl-C or SIGTERM that comes once the command's work is done: while the embedded LocalCluster
closes, or while the process exits (its exit functions: Dask's, torch's, a second or two). It ended
with no line at all: exit 0 with "Exception ignored in atexit callback ... KeyboardInterrupt", or the
process killed by the signal itself (exit 130 or 143 from the shell, nothing said) once the
interpreter's teardown had reset SIGINT and SIGTERM to their defaults. Now it is one line saying the
output is complete, exit 130 or 143.

Real `curate` processes on a LocalCluster of 2 workers, real signals sent to the process group as a
terminal's Ctrl-C is. The process exit is made to take 1.5 s as torch's does: the CLI runs under
``python -c`` with an exit function that sleeps, registered before the CLI is imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from pipelines.cli import main
from tests.helpers import only
from tests.pipelines.test_cluster import REPO

pytestmark = pytest.mark.slow

RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")
INPUT = str(REPO / "sample_data" / "math_science")
OVERRIDES = ["ingest.tokenizer=whitespace", *only("exact_dedup")]
#: the CLI as its process's command, with an exit function that takes 1.5 s (torch's take one to two)
SLOW_EXIT = (
    "import atexit, sys, time\natexit.register(time.sleep, 1.5)\nfrom pipelines.cli import main\nsys.exit(main())\n"
)


def _curate(args: list[str], sig: int, when: str, delay: float) -> tuple[int, list[str]]:
    """Run ``curate ARGS`` in a session of its own; ``delay`` s after a line holding ``when`` appears,
    send ``sig`` to its process group. Returns (exit code, its stdout and stderr lines)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_EXIT, *args],
        cwd=REPO,
        text=True,
        bufsize=1,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    lines: list[str] = []
    timer = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if timer is None and when in line:
                timer = threading.Timer(delay, os.killpg, (proc.pid, sig))
                timer.start()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert timer is not None, "\n".join(lines[-20:])
    return proc.returncode, lines


def _errors(lines: list[str]) -> list[str]:
    """The ERROR lines, each as ``logger: message``."""
    return [line.split(" ERROR ", 1)[1] for line in lines if " ERROR " in line]


@pytest.mark.parametrize(
    ("command", "sig", "said", "code"),
    [
        (
            "run",
            signal.SIGINT,
            "interrupted: the run had finished: every stage and run.json are in place in {out}, the output "
            "is complete (curate stats --check exits 0)",
            130,
        ),
        ("ingest", signal.SIGTERM, "terminated (SIGTERM): the stage had finished: {out} is in place, complete", 143),
    ],
    ids=["run-sigint", "ingest-sigterm"],
)
def test_a_stop_while_the_process_exits_is_one_line_saying_the_output_is_complete(tmp_path, command, sig, said, code):
    """The stop lands in the exit functions, after the command printed its funnel (its last words)."""
    out = tmp_path / "out"
    args = [
        command,
        *([RECIPE] if command == "run" else []),
        "--input",
        INPUT,
        "--output",
        str(out),
        "--workers",
        "2",
        *(OVERRIDES if command == "run" else ["tokenizer=whitespace"]),
    ]
    rc, lines = _curate(args, sig, "docs in  kept", 0.5)
    assert rc == code, "\n".join(lines[-15:])
    assert _errors(lines) == ["curate: " + said.format(out=out)], "\n".join(lines[-15:])
    assert not any("Traceback" in line or "Exception ignored" in line for line in lines)
    if command == "run":
        assert main(["stats", "--check", str(out)]) == 0
    else:
        assert (out / "_SUCCESS").exists()


def test_a_stop_after_the_last_stage_says_what_is_in_place(tmp_path):
    """A Ctrl-C 0.2 s after the last stage's line: while run.json is written or the LocalCluster closes.
    Either way one line that is true of the run folder, exit 130."""
    out = tmp_path / "out"
    args = ["run", RECIPE, "--input", INPUT, "--output", str(out), "--workers", "2", *OVERRIDES]
    rc, lines = _curate(args, signal.SIGINT, "pipelines.runner: exact_dedup: ", 0.2)
    assert rc == 130, "\n".join(lines[-15:])
    (line,) = _errors(lines)
    if (out / "run.json").exists():
        assert line.startswith(
            f"curate: interrupted: the run had finished: every stage and run.json are in place in {out}"
        ), line
    else:
        assert line.startswith("curate: interrupted: finished stages are kept"), line
    assert not any("Traceback" in line or "Exception ignored" in line for line in lines)
