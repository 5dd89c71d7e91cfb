"""Runs sharing a ``--cache-dir`` at the same time: a sub-step is computed once, the second run
waits for it and reuses it, and neither removes the other's half-written folder."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from pipelines.kit.step_lock import held_by_another, lock_path, step_locks
from pipelines.stage_cache import remove_temp

ROOT = Path(__file__).resolve().parents[2]


def test_a_second_holder_waits_for_the_first(tmp_path):
    events: list[str] = []
    first_has_it = threading.Event()

    def first() -> None:
        with step_locks(tmp_path, ["parsed-abc"], "ingest"):
            first_has_it.set()
            time.sleep(0.5)
            events.append("first done")

    t = threading.Thread(target=first)
    t.start()
    first_has_it.wait(5)
    assert held_by_another(tmp_path / ".parsed-abc.lock")
    with step_locks(tmp_path, ["parsed-abc", "extracted-abc"], "ingest"):
        events.append("second in")
    t.join()
    assert events == ["first done", "second in"]
    assert not list(tmp_path.glob(".*.lock"))  # removed on release


def test_a_stopped_run_leaves_the_temp_folders_another_run_is_writing(tmp_path):
    mine, theirs = tmp_path / ".parsed-aaa.tmp", tmp_path / ".parsed-bbb.tmp"
    mine.mkdir()
    theirs.mkdir()
    writing, release = threading.Event(), threading.Event()

    def other_run() -> None:
        with step_locks(tmp_path, ["parsed-bbb"], "ingest"):
            writing.set()
            release.wait(5)

    t = threading.Thread(target=other_run)
    t.start()
    writing.wait(5)
    assert lock_path(theirs) == tmp_path / ".parsed-bbb.lock"
    remove_temp(tmp_path)
    assert not mine.exists() and theirs.is_dir()
    release.set()
    t.join()


def test_two_ingests_sharing_a_cache_at_once_both_finish_alike(tmp_path):
    cache = tmp_path / "cache"
    argv = [sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(ROOT / "sample_data"), "--scheduler", "synchronous",
            "--quiet", "--cache-dir", str(cache)]
    runs = [subprocess.Popen([*argv, "--output", str(tmp_path / name)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name in ("a", "b")]
    results = [r.communicate(timeout=300) for r in runs]
    assert [r.returncode for r in runs] == [0, 0], [err[-2000:] for _, err in results]
    parts = sorted(p.name for p in (tmp_path / "a" / "docs").glob("*.parquet"))
    assert parts and all((tmp_path / "a" / "docs" / p).read_bytes() == (tmp_path / "b" / "docs" / p).read_bytes() for p in parts)
    assert not list(cache.rglob(".*.tmp")) and not list(cache.rglob(".*.lock"))
