"""A stop (Ctrl-C, SIGTERM) that comes once a stage's new folder is renamed into place: the stage has
finished. While its previous output, moved aside to ``.NAME.old``, was deleted (seconds to minutes on a
large corpus), a stop said "what the stage had written was removed and a finished folder it would replace
is kept as it was" (false: the new output was in place), left ``.NAME.old`` half deleted for good (a
re-run skipped the stage and kept it) and never named the run's later stages it made stale.

The interrupt is raised inside that deletion by wrapping ``shutil.rmtree`` as the tester's reproducer did
(it deletes part of the folder, then raises): it simulates the signal's timing; everything else is real.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

import pipelines.safety as safety
from pipelines.cli import main
from pipelines.recipe_schema import default_recipe_path
from tests.helpers import only
from tests.pipelines.test_runner import _corpus

RECIPE = str(default_recipe_path())
STAGES = ["ingest.tokenizer=whitespace", *only("exact_dedup", "minhash_dedup")]
ARGS = ["--scheduler", "synchronous", "--quiet", "--profile", "cpu"]


def _interrupt_old_deletion(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.rmtree

    def rmtree(path, *a, **k):
        if str(path).endswith(".old") and os.path.exists(path):
            for root, _dirs, files in os.walk(path):
                for name in files[:1]:
                    os.unlink(os.path.join(root, name))
            raise KeyboardInterrupt
        return real(path, *a, **k)

    monkeypatch.setattr(safety.shutil, "rmtree", rmtree)


def _run(raw: Path, out: Path, *overrides: str, args: list[str] = ARGS) -> int:
    return main(["run", RECIPE, "--input", str(raw), "--output", str(out), *args, *STAGES, *overrides])


def _config_hash(stage_dir: Path) -> str:
    return json.loads((stage_dir / "_SUCCESS").read_text())["config_hash"]


def test_a_stop_while_a_stage_deletes_its_old_output_says_the_new_one_is_in_place(tmp_path, caplog, monkeypatch):
    raw, run = _corpus(tmp_path), tmp_path / "run"
    assert _run(raw, run) == 0
    before = _config_hash(run / "10_exact_dedup")
    stage = ["exact-dedup", "--input", str(run / "00_ingest"), "--output", str(run / "10_exact_dedup"), *ARGS, "keep=longest"]
    _interrupt_old_deletion(monkeypatch)
    caplog.set_level(logging.WARNING)
    assert main(stage) == 130
    old = run / ".10_exact_dedup.old"
    assert _config_hash(run / "10_exact_dedup") != before  # the new output is in place
    assert old.is_dir()  # half deleted
    assert (f"interrupted: the stage finished: its new output is in place in {run / '10_exact_dedup'}; its previous output "
            f"is left, whole or in part, in {old}") in caplog.text
    assert "what the stage had written was removed" not in caplog.text
    # keep=longest keeps the same copies of this corpus: its output is the run's own, so nothing after it is stale
    # (pipelines/restat.py; curation/stats/run_state.py)
    assert "made again inside the run" not in caplog.text
    # the same command again: up to date, skipped, and the leftovers beside the stage folder go
    monkeypatch.undo()
    (run / ".10_exact_dedup.inprogress").mkdir()  # a killed write's, too
    caplog.clear()
    caplog.set_level(logging.INFO)
    assert main(stage) == 0
    assert "exact_dedup: up to date" in caplog.text
    assert not old.exists() and not (run / ".10_exact_dedup.inprogress").exists()


def test_a_stop_while_a_run_deletes_a_stage_s_old_output_records_the_stage_as_done(tmp_path, caplog, monkeypatch, capsys):
    raw, run = _corpus(tmp_path), tmp_path / "run"
    assert _run(raw, run) == 0
    _interrupt_old_deletion(monkeypatch)
    caplog.set_level(logging.ERROR)
    on_a_cluster = ["--workers", "1", "--quiet", "--profile", "cpu"]  # a LocalCluster: the stop comes in the driver
    assert _run(raw, run, "minhash_dedup.threshold=0.6", args=on_a_cluster) == 130
    old = run / ".20_minhash_dedup.old"
    assert (f"interrupted: finished stages are kept, 20_minhash_dedup among them (its new output is in place; its previous "
            f"output is left, whole or in part, in {old}); re-run the same command to resume (it deletes that folder)") in caplog.text
    record = json.loads((run / "run.progress.json").read_text())
    assert record["status"] == "interrupted" and all(s["done"] for s in record["stages"])
    assert record["stages"][-1]["config_hash"] == _config_hash(run / "20_minhash_dedup")
    monkeypatch.undo()
    assert _run(raw, run, "minhash_dedup.threshold=0.6") == 0
    assert not old.exists() and (run / "run.json").exists()
    capsys.readouterr()
    assert main(["verify", str(run)]) == 0, capsys.readouterr().out


def test_a_signal_during_the_bookkeeping_after_the_swap_waits_for_it(tmp_path, caplog, monkeypatch):
    """A real SIGTERM sent while the stage records its input checksums (just after the rename): held until
    its lines are logged, then raised as a stop that kept the stage (exit 143); the old output is left
    whole and the next run deletes it."""
    import pipelines.runner as runner_mod

    raw, run = _corpus(tmp_path), tmp_path / "run"
    assert _run(raw, run) == 0
    real = runner_mod.save_checksums

    def checksums_then_sigterm(*a, **k):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        return real(*a, **k)

    monkeypatch.setattr(runner_mod, "save_checksums", checksums_then_sigterm)
    caplog.set_level(logging.INFO)
    stage = ["minhash-dedup", "--input", str(run / "10_exact_dedup"), "--output", str(run / "20_minhash_dedup"), *ARGS, "threshold=0.6"]
    assert main(stage) == 143
    assert "minhash_dedup: 50 in" in caplog.text  # its bookkeeping ran whole
    assert f"terminated (SIGTERM): the stage finished: its new output is in place in {run / '20_minhash_dedup'}" in caplog.text
    assert (run / ".20_minhash_dedup.old" / "_SUCCESS").is_file()
    monkeypatch.undo()
    assert _run(raw, run, "minhash_dedup.threshold=0.6") == 0 and not (run / ".20_minhash_dedup.old").exists()


def test_held_stops_hold_sigint_and_sigterm_until_the_step_is_done():
    from pipelines.signals import Terminated, held_stops

    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with held_stops() as held:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
        assert [type(s) for s in held] == [KeyboardInterrupt, Terminated]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are back
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)
    finally:
        signal.signal(signal.SIGTERM, previous)
