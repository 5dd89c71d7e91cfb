"""Whole-recipe reliability on a real cluster: `dask scheduler` and two `dask worker` processes on 127.0.0.1.

The whole recipe run against them must equal the embedded LocalCluster run and a 1-worker run
(same kept ids, ledgers, stats and, where the mixture runs, manifests and shard checksums); a
worker killed mid-stage must not change the outputs; a whole run SIGKILLed in later stages
resumes to the same outputs. All compare with one reference run (LocalCluster, 2 workers).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import read_parts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _start_cluster(tmp_path: Path, n_workers: int = 2) -> tuple[str, list[subprocess.Popen]]:
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env,
    )]
    deadline = time.time() + 60
    while not sched_file.exists() and time.time() < deadline:
        time.sleep(0.2)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(n_workers):
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--nworkers", "1",
             "--memory-limit", "3GB", "--name", f"w{i}", "--local-directory", str(tmp_path / f"w{i}")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd=REPO,
        ))
    from distributed import Client

    with Client(address, timeout=60) as c:
        c.wait_for_workers(n_workers, timeout=120)
    return address, procs


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def _curate(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=1200)


_SLICE: dict[str, Path] = {}


def cluster_inputs() -> list[str]:
    """A slice of sample_data (every file, every kind of record) that runs in about a minute.

    Every 4th record of each sample file, written once per session next to the test files.
    """
    import gzip
    import tempfile

    if "dir" not in _SLICE:
        root = Path(tempfile.mkdtemp(prefix="curation-slice-"))
        for f in sorted((REPO / "sample_data").rglob("*.jsonl*")):
            data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
            lines = [ln for i, ln in enumerate(data.splitlines()) if i % 4 == 0]
            target = root / f.relative_to(REPO / "sample_data").with_suffix("").with_suffix(".jsonl")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"\n".join(lines) + b"\n")
        _SLICE["dir"] = root
    return [str(_SLICE["dir"])]


def compare_runs(a: Path, b: Path) -> None:
    """Same stage folders, same kept ids and ledgers, same stats counts, same manifests/shards."""
    names_a = sorted(p.name for p in a.iterdir() if p.is_dir() and p.name[:2].isdigit())
    names_b = sorted(p.name for p in b.iterdir() if p.is_dir() and p.name[:2].isdigit())
    assert names_a == names_b
    for name in names_a:
        for kind in ("docs", "ledger"):
            da = read_parts(a / name / kind)
            db = read_parts(b / name / kind)
            assert da.equals(db), f"{name}/{kind} differ"
        sa = json.loads((a / name / "stats.json").read_text())
        sb = json.loads((b / name / "stats.json").read_text())
        for key in ("in", "kept", "dropped", "dropped_by_reason", "by_source"):
            assert sa[key] == sb[key], f"{name} stats.{key} differ"
    for manifest in sorted(a.glob("*/manifests/*.json")):
        other = b / manifest.relative_to(a)
        ma, mb = json.loads(manifest.read_text()), json.loads(other.read_text())
        for m in (ma, mb):
            m.pop("created_at", None)
            m.pop("seconds", None)
        assert ma == mb, f"{manifest.name} differs"


RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The whole recipe on the sample slice with the embedded LocalCluster (2 workers)."""
    out = tmp_path_factory.mktemp("reference") / "run"
    r = _curate(["run", RECIPE, "--input", *cluster_inputs(), "--output", str(out), "--workers", "2", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def test_scheduler_and_two_workers_match_local_cluster_and_one_worker(reference, tmp_path):
    recipe = RECIPE
    address, procs = _start_cluster(tmp_path)
    try:
        r = _curate(["run", recipe, "--input", *cluster_inputs(), "--output", str(tmp_path / "remote"), "--scheduler", address, "--quiet"])
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        _stop(procs)
    r = _curate(["run", recipe, "--input", *cluster_inputs(), "--output", str(tmp_path / "one"), "--workers", "1", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    compare_runs(reference, tmp_path / "remote")
    compare_runs(reference, tmp_path / "one")


def test_worker_killed_mid_stage_does_not_change_outputs(reference, tmp_path):
    recipe = RECIPE
    address, procs = _start_cluster(tmp_path)
    try:
        run = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "run", recipe, "--input", *cluster_inputs(), "--output",
             str(tmp_path / "run"), "--scheduler", address, "--quiet"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        from distributed import Client

        killed = None
        with Client(address, timeout=30) as c:
            deadline = time.time() + 300
            while killed is None and time.time() < deadline and run.poll() is None:
                busy = {w: t for w, t in c.processing().items() if t}
                if busy:
                    worker = sorted(busy)[0]
                    pid = c.run(os.getpid, workers=[worker])[worker]
                    os.kill(pid, signal.SIGKILL)
                    killed = worker
                time.sleep(0.05)
        out, err = run.communicate(timeout=1200)
        assert killed is not None, "no task was ever running on a worker"
        assert run.returncode == 0, err[-3000:]
    finally:
        _stop(procs)
    compare_runs(reference, tmp_path / "run")


def _kill_run_when(run_dir: Path, stage_folder: str, timeout: float = 600) -> list[str]:
    """Start the recipe, SIGKILL it (driver, scheduler and workers: one process group) once
    ``stage_folder`` is in progress and has written something; returns the stages complete then."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "run", RECIPE, "--input", *cluster_inputs(), "--output", str(run_dir),
         "--workers", "2", "--quiet"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    work = run_dir / f".{stage_folder}.inprogress"
    cache = run_dir / ".cache" / stage_folder.split("_", 1)[1]
    deadline = time.time() + timeout
    try:
        # mid-stage: the stage's folder exists and it has written a file (a partition or a cached step)
        while time.time() < deadline and proc.poll() is None:
            written = [p for d in (work, cache) if d.exists() for p in d.rglob("*") if p.is_file()]
            if written:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"the run ended before {stage_folder} had written anything"
        assert work.exists(), f"{stage_folder} never started"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return sorted(p.parent.name for p in run_dir.glob("*/_SUCCESS"))


def test_run_sigkilled_in_later_stages_resumes_to_identical_outputs(reference, tmp_path):
    run = tmp_path / "out" / "run"
    run.parent.mkdir()
    stages = [p.name for p in sorted(reference.iterdir()) if p.is_dir() and p.name[:2].isdigit()]
    middle, last = "30_semdedup", stages[-1]
    assert middle in stages and last == "80_mixture", stages
    # 1. killed while SemDeDup embeds: ingest, exact and MinHash dedup are complete, SemDeDup is not
    done = _kill_run_when(run, middle)
    assert done == stages[: stages.index(middle)], done
    # 2. the re-run is killed while the mixture writes shards: every earlier stage complete
    done = _kill_run_when(run, last)
    assert done == stages[:-1], done
    assert not (run / last).exists() and (run / f".{last}.inprogress").exists()
    # 3. the last re-run redoes only the mixture; nothing half-written was taken as complete
    r = _curate(["run", RECIPE, "--input", *cluster_inputs(), "--output", str(run), "--workers", "2", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    skipped = {s["folder"]: s["skipped"] for s in json.loads((run / "run.json").read_text())["stages"]}
    assert skipped == {name: name != last for name in stages}, skipped
    assert not list(run.glob(".*.inprogress"))
    compare_runs(reference, run)
    v = _curate(["verify", str(run)])
    assert v.returncode == 0, v.stdout[-3000:] + v.stderr[-2000:]


def _hostile_files(root: Path) -> dict[str, str]:
    """The hostile corpus next to a copy of the sample slice; returns {doc id: expected ingest reason}."""
    import gzip
    import shutil

    import pandas as pd

    shutil.copytree(cluster_inputs()[0], root)
    bad = root / "zz_hostile"  # after the slice in input order: the duplicate id is the second one seen
    bad.mkdir()
    first_web = json.loads((root / "web" / "web.jsonl").read_text().splitlines()[0])
    lines = [
        json.dumps({"id": "h-ok", "text": "A normal page about tide pools and the animals that live in them. " * 20, "source": "web"}).encode(),
        b'{"id": "h-broken", "text": "no closing brace"',                       # malformed JSON
        b'{"id": "h-utf8", "text": "bad \xff\xfe byte", "source": "web"}',        # invalid UTF-8
        json.dumps({"id": "h-nul", "text": "nul \u0000 inside", "source": "web"}).encode(),
        json.dumps({"id": "h-empty", "text": "", "source": "web"}).encode(),
        json.dumps({"id": "h-space", "text": " \n\t ", "source": "web"}).encode(),
        json.dumps({"id": "h-list", "text": ["not", "a", "string"], "source": "web"}).encode(),
        json.dumps({"id": "h-notext", "source": "web", "url": "https://x.example/"}).encode(),   # missing column
        json.dumps({**first_web, "text": "a different text under an id that is already used"}).encode(),
        json.dumps({"id": "h-huge", "text": "word " * 10_500_000, "source": "web"}).encode(),  # a 52 MB document
        b"",
    ]
    lines += [json.dumps({"id": f"h-one-{s}-{i}", "text": c, "source": s}).encode()
              for i, c in enumerate("x.7") for s in ("web", "code", "math_science")]  # 1-character documents
    (bad / "mixed.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    payload = b"".join(json.dumps({"id": f"h-gz-{i}", "text": f"compressed record {i} " * 40, "source": "web"}).encode() + b"\n"
                       for i in range(2000))
    blob = gzip.compress(payload, mtime=0)
    (bad / "cut.jsonl.gz").write_bytes(blob[: len(blob) // 2])                    # truncated gzip
    pd.DataFrame({"id": ["h-int"], "text": [7], "source": ["web"]}).to_parquet(bad / "ints.parquet")  # wrong type
    return {"h-notext": "missing_text", "h-nul": "nul_byte", "h-empty": "empty_text", "h-space": "empty_text",
            "h-list": "wrong_type", "h-huge": "too_large", "h-int": "wrong_type"}


def test_hostile_corpus_runs_the_whole_recipe_and_verifies(reference, tmp_path):
    inputs = tmp_path / "in"
    expected = _hostile_files(inputs)
    out = tmp_path / "run"
    r = _curate(["run", RECIPE, "--input", str(inputs), "--output", str(out), "--workers", "2", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    v = _curate(["verify", str(out)])
    assert v.returncode == 0, v.stdout[-3000:] + v.stderr[-2000:]
    # every hostile record is accounted for at ingest, with the reason its case calls for
    ledger = read_parts(out / "00_ingest" / "ledger")
    reasons = dict(zip(ledger["doc_id"], ledger["reason"], strict=True))
    for doc_id, reason in expected.items():
        assert reasons.get(doc_id) == reason, (doc_id, reasons.get(doc_id))
    by_reason = ledger["reason"].value_counts().to_dict()
    for reason in ("malformed_json", "invalid_utf8", "truncated_input", "duplicate_id"):
        assert by_reason.get(reason, 0) >= 1, (reason, by_reason)
    assert any(i.endswith("@mixed.jsonl:9") for i in ledger["doc_id"])          # the duplicate id's row
    ingest_kept = set(read_parts(out / "00_ingest" / "docs")["doc_id"])
    assert "h-ok" in ingest_kept and {f"h-one-{s}-0" for s in ("web", "code", "math_science")} <= ingest_kept
    assert sum(i.startswith("h-gz-") for i in ingest_kept) > 500                 # what was read before the cut
    # the 1-character documents went through the later stages: each is kept to the end or dropped
    # once, with a reason, by some stage (SemDeDup embedded the web ones, MinHash shingled all)
    tiny = {f"h-one-{s}-{i}" for s in ("web", "code", "math_science") for i in range(3)}
    stages = sorted(p for p in out.iterdir() if p.is_dir() and p.name[:2].isdigit())
    fates = {}
    for stage in stages:
        led = read_parts(stage / "ledger")
        for doc_id, reason in zip(led["doc_id"], led["reason"], strict=True):
            if doc_id in tiny:
                assert doc_id not in fates, (doc_id, fates[doc_id], stage.name)
                fates[doc_id] = (stage.name, reason)
    final = set(read_parts(stages[-1] / "docs")["doc_id"])
    assert all((d in fates) != (d in final) for d in tiny), (fates, tiny & final)
    assert tiny & set(read_parts(out / "30_semdedup" / "docs")["doc_id"]), fates
    # nothing else is affected: the sample slice's per-document decisions through MinHash equal the clean run's
    for stage in ("00_ingest", "10_exact_dedup", "20_minhash_dedup"):
        clean = set(read_parts(reference / stage / "docs")["doc_id"])
        hostile = {i for i in read_parts(out / stage / "docs")["doc_id"] if not i.startswith("h-")}
        assert hostile == clean, stage


def test_a_one_process_run_loads_no_distributed_and_a_cluster_after_it_keeps_its_config():
    """``--scheduler synchronous`` computes without importing distributed (~0.3 CPU-s of imports);
    a cluster opened afterwards in the same process, where distributed is first imported, leaves
    distributed's own config in place when it closes."""
    code = (
        "import sys\n"
        "import dask, dask.dataframe as dd, pandas as pd\n"
        "from pipelines.cluster import open_client\n"
        "with open_client('synchronous'):\n"
        "    assert int(dd.from_pandas(pd.DataFrame({'a': [1, 2]}), npartitions=1)['a'].sum().compute()) == 3\n"
        "assert 'distributed' not in sys.modules, 'one process loaded distributed'\n"
        "with open_client(workers=1, memory_limit='0') as client:\n"
        "    assert client.submit(abs, -1).result() == 1\n"
        "assert dask.config.get('distributed.comm.timeouts.connect')\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]
