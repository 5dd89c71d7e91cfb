"""Memory-bound run: the whole recipe on a corpus larger than the workers' total memory limit.

Starts a real cluster (``dask scheduler`` and N ``dask worker`` processes with ``--memory-limit``,
one thread each, as on a cluster node), runs ``curate run`` against it, and samples every 0.5 s the
resident memory of each worker process, its nanny and the driver (``curate run``), attributed to the
stage running at that moment (the run folder's ``.NN_stage.inprogress``). Then it checks that
no worker was killed or restarted (same process ids throughout, no "exceeded memory"/"restarting"
line in the worker logs), that the run finished, and that ``curate verify`` passes.

    python benchmarks/reliability/corpus.py --gb 2.5
    python benchmarks/reliability/bench_memory.py --corpus benchmarks/_work/reliability/corpus \
        --workers 2 --memory-limit 1GB

Results: ``benchmarks/_work/reliability/<name>.json`` and a table printed in Markdown
(benchmarks/reliability/RESULTS.md holds the recorded run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "benchmarks" / "_work" / "reliability"
# The CPU-affordable settings of the run (the memory figures are the point, not model quality):
# SemDeDup on the static embedder (MiniLM runs at ~17 docs/s on 2 cores: days for this corpus), and
# the edu scorer distilled from the local judge's annotations into a hashed n-gram head (the shipped
# default head reads MiniLM vectors, which this run does not compute).
# Sized for 1 GB workers: 32 MB partitions and 32 MB shards (the defaults, 128 and 256 MB, are for
# workers with a few GB each: a 120 MB block killed 1 GB workers at ingest).
OVERRIDES = ["semdedup.model=minilm-static", "edu_score.distil=hashed", "edu_score.scorer=distilled",
             "ingest.blocksize_mb=32", "mixture.shard_target_mb=32"]
BAD_LINES = re.compile(r"exceeded \d+% memory|Restarting worker|Worker process still alive|MemoryError|check-worker-ttl", re.I)
PAUSE_LINES = re.compile(r"Pausing worker|Unpausing worker|spill", re.I)


class Sampler(threading.Thread):
    """Peak RSS per process role and per stage, sampled every ``poll`` seconds."""

    def __init__(self, roles: dict[str, psutil.Process], run_dir: Path, poll: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.roles, self.run_dir, self.poll = roles, run_dir, poll
        self.stop = threading.Event()
        self.peaks: dict[str, float] = {}
        self.by_stage: dict[str, dict[str, float]] = {}
        self.pids: dict[str, set[int]] = {}
        self.samples = 0

    def stage(self) -> str:
        # the newest: a folder left by a killed earlier run is older than the running stage's
        running = list(self.run_dir.glob(".*.inprogress")) if self.run_dir.exists() else []
        with contextlib.suppress(OSError, ValueError):
            newest = max(running, key=lambda p: p.stat().st_mtime)
            return newest.name.split("_", 1)[1].removesuffix(".inprogress")
        return "(between stages)"

    def run(self) -> None:
        while not self.stop.is_set():
            stage = self.stage()
            for role, proc in self.roles.items():
                if role.startswith("nanny"):  # the worker is the nanny's child process
                    with contextlib.suppress(psutil.Error):
                        # the worker process (the nanny's other child is multiprocessing's resource tracker)
                        kids = [k for k in proc.children() if "spawn_main" in " ".join(k.cmdline())]
                        self.pids.setdefault(role.replace("nanny", "worker"), set()).update(k.pid for k in kids)
                        for k in kids:
                            self._record(role.replace("nanny", "worker"), k, stage)
                self._record(role, proc, stage)
            self.samples += 1
            time.sleep(self.poll)

    def _record(self, role: str, proc: psutil.Process, stage: str) -> None:
        try:
            mib = proc.memory_info().rss / 2**20
        except psutil.Error:
            return
        self.peaks[role] = max(self.peaks.get(role, 0.0), mib)
        row = self.by_stage.setdefault(stage, {})
        row[role] = max(row.get(role, 0.0), mib)


def start_cluster(tmp: Path, n: int, memory_limit: str) -> tuple[str, list[subprocess.Popen], list[Path]]:
    sched_file = tmp / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    logs = [tmp / "scheduler.log"] + [tmp / f"worker{i}.log" for i in range(n)]
    procs = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
        stdout=open(logs[0], "w"), stderr=subprocess.STDOUT, start_new_session=True, env=env)]  # noqa: SIM115
    deadline = time.time() + 60
    while not sched_file.exists() and time.time() < deadline:
        time.sleep(0.2)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(n):
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--nworkers", "1",
             "--memory-limit", memory_limit, "--name", f"w{i}", "--local-directory", str(tmp / f"w{i}")],
            stdout=open(logs[i + 1], "w"), stderr=subprocess.STDOUT, start_new_session=True, env=env, cwd=ROOT))  # noqa: SIM115
    from distributed import Client

    with Client(address, timeout=60) as c:
        c.wait_for_workers(n, timeout=120)
    return str(sched_file), procs, logs


def markdown(result: dict) -> str:
    """The per-stage peak table of a result (what RESULTS.md records)."""
    workers = sorted(k for k in result["peak_mib"] if k.startswith("worker"))
    head = "| stage | seconds | documents in → kept | " + " | ".join(f"{w} peak (MiB)" for w in workers) + " | driver peak (MiB) |"
    rows = [head, "|" + "---|" * (4 + len(workers))]
    for folder, st in result["stages"].items():
        name = folder.split("_", 1)[1]
        peaks = result["peak_mib_by_stage"].get(name, {})
        rows.append(f"| {name} | {st['seconds']:.0f} | {st['docs_in']:,} → {st['kept']:,} | "
                    + " | ".join(f"{peaks.get(w, 0):.0f}" for w in workers) + f" | {peaks.get('driver', 0):.0f} |")
    rows.append(f"| **whole run** | {result['wall_s']:.0f} | | " + " | ".join(f"**{result['peak_mib'][w]:.0f}**" for w in workers)
                + f" | {result['peak_mib'].get('driver', 0):.0f} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=WORK / "corpus")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument("--name", default="memory_bound")
    ap.add_argument("--resume", action="store_true", help="keep the run folder: finished stages are skipped (re-measure the rest)")
    ap.add_argument("--stage", help="run one stage (e.g. mixture) into RUN/NN_<stage> from --stage-input, keeping the run folder")
    ap.add_argument("--stage-input", help="the stage folder inside the run that --stage reads (e.g. 70_edu_score)")
    ap.add_argument("--report", type=Path, help="print the Markdown table of a result JSON and exit")
    ap.add_argument("overrides", nargs="*", help="extra recipe overrides (key=value)")
    args = ap.parse_args()
    if args.report:
        print(markdown(json.loads(args.report.read_text())))
        return

    tmp = WORK / f"{args.name}_cluster"
    run_dir = WORK / f"{args.name}_run"
    for d in (tmp,) if args.resume or args.stage else (tmp, run_dir):
        shutil.rmtree(d, ignore_errors=True)
    tmp.mkdir(parents=True)
    corpus_bytes = sum(p.stat().st_size for p in args.corpus.rglob("*") if p.is_file())
    sched_file, procs, logs = start_cluster(tmp, args.workers, args.memory_limit)
    recipe = str(ROOT / "pipelines/configs/glm45.yaml")
    cmd = [sys.executable, "-m", "pipelines.cli", "run", recipe,
           "--input", str(args.corpus), "--output", str(run_dir), "--scheduler", sched_file, *OVERRIDES, *args.overrides]
    if args.stage:
        from pipelines.stages import folder_name

        shutil.rmtree(run_dir / folder_name(args.stage), ignore_errors=True)
        cmd = [sys.executable, "-m", "pipelines.cli", args.stage.replace("_", "-"), "--input", str(run_dir / args.stage_input),
               "--output", str(run_dir / folder_name(args.stage)), "--config", recipe, "--scheduler", sched_file, *args.overrides]
    started = time.time()
    with open(tmp / "run.log", "w") as log:
        driver = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                                  env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        roles = {"driver": psutil.Process(driver.pid)}
        roles.update({f"nanny{i}": psutil.Process(p.pid) for i, p in enumerate(procs[1:])})
        sampler = Sampler(roles, run_dir)
        sampler.start()
        rc = driver.wait()
        sampler.stop.set()
        sampler.join()
    wall = time.time() - started
    ended = time.strftime("%Y-%m-%d %H:%M:%S")
    verify = subprocess.run([sys.executable, "-m", "pipelines.cli", "verify", str(run_dir)], cwd=ROOT,
                            capture_output=True, text=True)
    for p in reversed(procs):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=30)
    bad = {log.name: [ln.strip() for ln in log.read_text(errors="replace").splitlines() if BAD_LINES.search(ln) and ln[:19] <= ended][:20]
           for log in logs}
    pauses = {log.name: sum(1 for ln in log.read_text(errors="replace").splitlines() if PAUSE_LINES.search(ln)) for log in logs}
    stats = {}
    for stage_dir in sorted(run_dir.glob("[0-9][0-9]_*")):
        with contextlib.suppress(OSError, ValueError):
            s = json.loads((stage_dir / "stats.json").read_text())
            if (args.resume or args.stage) and stage_dir.name.split("_", 1)[1] not in sampler.by_stage:
                continue  # skipped: measured by the earlier run
            stats[stage_dir.name] = {"seconds": s.get("seconds"), "docs_in": s["in"]["documents"], "kept": s["kept"]["documents"],
                                     "dropped": s["dropped"]["documents"]}
    result = {
        "command": " ".join(cmd), "rc": rc, "wall_s": round(wall, 1), "corpus_bytes": corpus_bytes,
        "corpus": json.loads((args.corpus.parent / "corpus.json").read_text()) if (args.corpus.parent / "corpus.json").exists() else None,
        "workers": args.workers, "memory_limit": args.memory_limit, "cpus": os.cpu_count(),
        "peak_mib": {k: round(v, 1) for k, v in sorted(sampler.peaks.items())},
        "peak_mib_by_stage": {st: {k: round(v, 1) for k, v in sorted(row.items())} for st, row in sampler.by_stage.items()},
        "worker_pids": {k: sorted(v) for k, v in sampler.pids.items()},
        "worker_restarts": {k: len(v) - 1 for k, v in sampler.pids.items()},
        "bad_log_lines": bad, "pause_or_spill_lines": pauses, "samples": sampler.samples,
        "verify_rc": verify.returncode, "verify_tail": verify.stdout[-1500:] + verify.stderr[-1500:],
        "stages": stats,
    }
    out = WORK / f"{args.name}.json"
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print(markdown(result))
    ok = rc == 0 and verify.returncode == 0 and not any(result["worker_restarts"].values()) and not any(bad.values())
    print("OK" if ok else "FAILED", "→", out)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
