"""A stop (SIGTERM, how SLURM and Kubernetes preempt a job) while ingest extracts the pages of a crawl
keeps the parts already extracted, their code tags and rendered code texts with them: the same
command then extracts only the others, and the outputs are those of a run that was never stopped,
byte for byte.

A real ``curate ingest`` process (trafilatura, the slowest extractor, over 4 WARC files of real
pages, one partition each) gets the signal once the first part's record
(``_parts/part-NNNNN.parquet`` in the ``extracted`` step's temporary folder) is written.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.curation.test_warc_http_bodies import real_pages, warc
from tests.golden import run_digests

ROOT = Path(__file__).resolve().parents[2]
FILES, PAGES = 4, 40
ARGS = ["extractor=trafilatura"]


def crawl(folder: Path) -> Path:
    """FILES WARC files of PAGES pages each, every page its own (a paragraph naming it)."""
    folder.mkdir(parents=True)
    pages = real_pages()
    for f in range(FILES):
        records = []
        for p in range(PAGES):
            body = pages[(f + p) % len(pages)].replace(b"<body", b"<body><p>page %d of file %d</p" % (p, f), 1)
            records.append((f"https://f{f}.example/p{p}", body))
        warc(folder / f"c{f}.warc.gz", records)
    return folder


def curate(inputs: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(inputs), "--output", str(out), *ARGS]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def extract_temp(out: Path) -> list[Path]:
    return sorted((out / ".cache" / "ingest").glob(".extracted-*.tmp"))


def finished_run(inputs: Path, out: Path) -> str:
    done = subprocess.run(curate(inputs, out), cwd=ROOT, env=env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_stop_while_extracting_keeps_the_parts_extracted_and_the_rerun_extracts_only_the_rest(tmp_path):
    inputs = crawl(tmp_path / "crawl")
    out = tmp_path / "stopped" / "00_ingest"
    proc = subprocess.Popen(curate(inputs, out), cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 300
        while not any(list((tmp / "_parts").glob("part-*.parquet")) for tmp in extract_temp(out)):
            assert proc.poll() is None, f"ingest ended before a part was extracted:\n{proc.stdout.read()}"
            assert time.time() < deadline, "no part extracted in 300 s"
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        log, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, log
    assert not (out / "_SUCCESS").exists(), f"ingest finished before the signal: give it more pages\n{log}"
    [tmp] = extract_temp(out)
    kept = sorted(int(p.stem.removeprefix("part-")) for p in (tmp / "_parts").glob("part-*.parquet"))
    assert 1 <= len(kept) < FILES, kept
    # a kept part keeps its code tags and code texts, the files code_web reads
    for n in kept:
        for sub in ("", "code_tags/", "code_text/"):
            assert (tmp / f"{sub}part-{n:05d}.parquet").is_file(), (sub, n)
    inodes = {n: os.stat(tmp / "code_tags" / f"part-{n:05d}.parquet").st_ino for n in kept}

    rerun = finished_run(inputs, out)
    said = re.search(r"ingest: extract \(trafilatura\): (\d+) of (\d+) partitions kept from a stopped run; computing (\d+)", rerun)
    assert said, rerun
    assert [int(x) for x in said.groups()] == [len(kept), FILES, FILES - len(kept)]
    assert not extract_temp(out)
    [final] = sorted((out / ".cache" / "ingest").glob("extracted-*"))
    assert not (final / "_parts").exists()
    assert {n: os.stat(final / "code_tags" / f"part-{n:05d}.parquet").st_ino for n in kept} == inodes  # not extracted again

    reference = tmp_path / "reference" / "00_ingest"
    finished_run(inputs, reference)
    assert run_digests(out) == run_digests(reference)
    files = sorted(p.relative_to(reference) for p in reference.rglob("*.parquet") if not p.relative_to(reference).parts[0].startswith("."))
    assert len(files) > FILES
    for rel in files:
        assert (out / rel).read_bytes() == (reference / rel).read_bytes(), rel
