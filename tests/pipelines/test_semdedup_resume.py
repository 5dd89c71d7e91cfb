"""A stop (SIGTERM, how SLURM and Kubernetes preempt a job, or Ctrl-C) while SemDeDup embeds keeps
the partitions already embedded: the same command then embeds only the others, and the stage's
outputs are those of a run that was never stopped, byte for byte.

A real ``curate semdedup`` process (the fast static embedder, 4 partitions of about a second each)
gets the signal once the files of two partitions are on disk (the first one's record,
``_parts/part-NNNNN.parquet``, is written before the second partition starts); its exit code,
what the stop left in the cache, the re-run's log line and the files it wrote are checked, and a
partition's file cut short is never taken.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curation.files import part_name
from tests.golden import run_digests
from tests.helpers import docs_frame, make_stage_dir

ROOT = Path(__file__).resolve().parents[2]
NPARTS = 4
PARTS = "_parts"  # a resumable step's records of its finished partitions (pipelines.kit.resume.PARTS)
ARGS = ["model=minilm-static"]  # the fast distilled embedder (tests/pipelines/test_semdedup_stage.py)
WORDS = [
    f"{a}{b}" for a in ("river", "stone", "cloud", "market", "signal", "garden", "engine", "letter") for b in range(60)
]


def corpus_dir(path: Path) -> Path:
    rng = random.Random(7)
    rows = [
        {"doc_id": f"d{i}", "text": " ".join(rng.choices(WORDS, k=90)), "source": "web"} for i in range(NPARTS * 1500)
    ]
    rows += [{"doc_id": f"twin{i}", "text": rows[i]["text"] + " again", "source": "web"} for i in range(20)]
    return make_stage_dir(path, docs_frame(rows), nparts=NPARTS)


def curate(stage_input: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", "semdedup", "--input", str(stage_input), "--output", str(out), *ARGS]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def embedding_temp(out: Path) -> list[Path]:
    return sorted((out / ".cache" / "semdedup").glob(".embeddings-*.tmp"))


def parquet_files(stage_dir: Path) -> list[Path]:
    """The Parquet files of a stage folder (documents, ledger, artifacts), not of its cache."""
    return sorted(
        rel
        for rel in (p.relative_to(stage_dir) for p in stage_dir.rglob("*.parquet"))
        if not rel.parts[0].startswith(".")
    )


def finished_run(stage_input: Path, out: Path, *overrides: str) -> str:
    """Run the stage to its end; its log."""
    done = subprocess.run(
        [*curate(stage_input, out), *overrides], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def stopped_run(stage_input: Path, out: Path, signum: int) -> Path:
    """Start the stage, send ``signum`` once two partitions are embedded, and return the temporary folder it left."""
    proc = subprocess.Popen(
        curate(stage_input, out), cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.time() + 300
        while not any(len(list(tmp.glob("part-*.parquet"))) >= 2 for tmp in embedding_temp(out)):
            assert proc.poll() is None, f"the stage ended before two partitions were embedded:\n{proc.stdout.read()}"
            assert time.time() < deadline, "two partitions not embedded in 300 s"
            time.sleep(0.01)
        proc.send_signal(signum)
        log, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (130 if signum == signal.SIGINT else 143), log
    assert not (out / "_SUCCESS").exists(), f"the stage finished before the signal: make its partitions larger\n{log}"
    temps = embedding_temp(out)
    assert len(temps) == 1, f"the stop removed the partitions embedded: left {[str(p) for p in out.rglob('*')]}\n{log}"
    return temps[0]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_while_embedding_keeps_the_partitions_embedded_and_the_rerun_embeds_only_the_rest(tmp_path, signum):
    stage_input = corpus_dir(tmp_path / "in")
    out = tmp_path / "stopped" / "30_semdedup"
    tmp = stopped_run(stage_input, out, signum)
    kept = {int(p.stem.removeprefix("part-")) for p in (tmp / PARTS).glob("part-*.parquet")}
    assert 1 <= len(kept) < NPARTS, f"partitions kept: {sorted(kept)}"
    assert all((tmp / part_name(n)).is_file() for n in kept)
    before = {n: os.stat(tmp / part_name(n)).st_ino for n in kept}
    # a partition whose write was cut short: its file without its record, a temp file beside it
    cut = min(set(range(NPARTS)) - kept)
    (tmp / part_name(cut)).write_bytes(b"PAR1 cut short")
    (tmp / f".{part_name(cut)}.999.tmp").write_bytes(b"PAR1")

    if signum == signal.SIGTERM:  # other parameters: another step, which takes nothing from this one's partitions
        other = finished_run(stage_input, out, "max_seq_length=128")
        assert "kept from a stopped run" not in other and embedding_temp(out) == [tmp]

    rerun = finished_run(stage_input, out)
    said = re.search(
        r"semdedup: embed \(minilm-static\): (\d+) of (\d+) partitions kept from a stopped run; computing (\d+)", rerun
    )
    assert said, rerun
    assert [int(x) for x in said.groups()] == [len(kept), NPARTS, NPARTS - len(kept)]
    assert not embedding_temp(out), "the finished step is renamed into place"
    final = tmp.with_name(tmp.name.removeprefix(".").removesuffix(".tmp"))  # the same key
    assert not (final / PARTS).exists()
    # the partitions kept are the files the stopped run wrote, not embedded again
    assert {n: os.stat(final / part_name(n)).st_ino for n in kept} == before

    reference = tmp_path / "reference" / "30_semdedup"
    finished_run(stage_input, reference)
    assert run_digests(out) == run_digests(reference)
    files = parquet_files(reference)
    assert files == parquet_files(out) and len(files) > NPARTS
    for rel in files:
        assert (out / rel).read_bytes() == (reference / rel).read_bytes(), rel

    if signum == signal.SIGTERM:  # a finished step is reused whole
        again = finished_run(stage_input, out, "eps=0.11")
        assert "semdedup: reusing embeddings" in again and "computing embeddings" not in again
