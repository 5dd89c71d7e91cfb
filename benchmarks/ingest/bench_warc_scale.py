"""A large WARC through ``curate ingest`` on two workers: memory per worker and cost per page against the file's size.

``--build`` writes Common-Crawl-style WARCs (one gzip member per record) of ``--sizes`` GB on disk
into ``--dir`` from the real pages of ``../shared/data`` (``web/web_docs.parquet``: every row with
raw ``html``, a few thousand pages, repeated in order; each record has its own URL, the page's
URL with ``bench-record=<n>`` added, and its own record id, so no copy is a duplicate to ingest).
Each size is then ingested by the real CLI (``python -m pipelines.cli ingest``, the embedded recipe
with ``key=value`` overrides, its own 2-worker LocalCluster). While it runs, every 0.5 s the script
reads each Dask worker process's ``/proc/<pid>/status`` (``VmHWM``: its peak RSS), its CPU times and
the seconds its threads ran or waited for a core (``schedstat``); afterwards ``stats.json`` gives
the run's CPU seconds (driver and workers) and the pages. A worker's *busy* share is the time its
busiest thread (the one that runs the tasks) ran or waited for a core over the wall time (what it
would have used of an idle core), its *CPU share* its CPU seconds over the wall time (lowered by
the other jobs of a shared machine).

    python benchmarks/ingest/bench_warc_scale.py --build --dir /tmp/warc-scale --sizes 0.25 0.5 1 extractor=resiliparse

Without ``--build`` the WARCs already in ``--dir`` are reused. A WARC of 1 GB is ~6 GB
decompressed; ``--dir`` needs ~2x the sizes' sum (the WARCs and the runs' outputs).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data")) / "web" / "web_docs.parquet"
GB = 1 << 30


def load_pages(path: Path = DATA) -> list[tuple[str, bytes]]:
    """(URL, HTML as UTF-8) of every row with raw HTML, in file order."""
    import pandas as pd

    df = pd.read_parquet(path, columns=["url", "html"])
    df = df[df["html"].fillna("").str.len() > 0]
    return [(url or f"https://page{i}.example.org/", html.encode("utf-8")) for i, (url, html) in enumerate(zip(df["url"], df["html"], strict=True))]


def record_url(url: str, n: int) -> str:
    """The page's URL, made the ``n``-th record's own (a query parameter ingest's URL normal form keeps).

    >>> record_url("https://a.org/x?q=1#top", 7), record_url("https://a.org/", 0)
    ('https://a.org/x?q=1&bench-record=7#top', 'https://a.org/?bench-record=0')
    """
    base, hash_, fragment = url.partition("#")
    return f"{base}{'&' if '?' in base else '?'}bench-record={n}{hash_}{fragment}"


def warc_record(url: str, body: bytes, n: int) -> bytes:
    """An HTTP response record (uncompressed) for ``body`` at ``url``, record id from ``n``."""
    http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " + str(len(body)).encode()
            + b"\r\n\r\n" + body)
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n"
            f"WARC-Date: 2024-03-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:{uuid.UUID(int=n)}>\r\n"
            f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n").encode()
    return head + http + b"\r\n\r\n"


def build_warcs(pages: Sequence[tuple[str, bytes]], targets: dict[Path, int]) -> dict[Path, dict[str, int]]:
    """Write each path as the first records of one sequence until it holds ``targets[path]`` bytes on disk.

    The pages are taken in order, again and again; record ``n`` is page ``n % len(pages)`` at
    :func:`record_url`. A smaller file is a prefix of a larger one (same records, same order).
    Returns, per path, its ``records``, ``bytes`` on disk and ``uncompressed`` bytes.
    """
    left = dict(sorted(targets.items(), key=lambda kv: kv[1]))
    handles = {p: open(p, "wb") for p in left}  # noqa: SIM115 - closed below, as each file fills
    done: dict[Path, dict[str, int]] = {}
    n = size = raw = 0
    try:
        while left:
            url, body = pages[n % len(pages)]
            record = warc_record(record_url(url, n), body, n)
            member = gzip.compress(record, compresslevel=6, mtime=0)
            for fh in handles.values():
                fh.write(member)
            n, size, raw = n + 1, size + len(member), raw + len(record)
            for p in [p for p, t in left.items() if size >= t]:
                handles.pop(p).close()
                del left[p]
                done[p] = {"records": n, "bytes": size, "uncompressed": raw}
    finally:
        for fh in handles.values():
            fh.close()
    return done


def _status(pid: int) -> dict[str, int]:
    """VmHWM and VmRSS of a process, kB ({} once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in fh) if k in ("VmHWM", "VmRSS")}
    except OSError:
        return {}


def _cpu(pid: int) -> float | None:
    """User + system CPU seconds of a process (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _demand(pid: int) -> dict[int, float]:
    """Seconds each thread of a process ran or waited to run (``/proc/<pid>/task/*/schedstat``): time it
    wanted a core, which on a shared machine is what "busy" means (its CPU time also counts the load)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                run, wait, _ = fh.read().split()
        except (OSError, ValueError):
            continue
        out[int(tid)] = (int(run) + int(wait)) / 1e9
    return out


def worker_pids(parent: int) -> list[int]:
    """The Dask worker processes under ``parent`` (LocalCluster spawns each with ``spawn_main``)."""
    import psutil

    out = []
    try:
        children = psutil.Process(parent).children(recursive=True)
    except psutil.NoSuchProcess:
        return out
    for c in children:
        try:
            if "spawn_main" in " ".join(c.cmdline()):
                out.append(c.pid)
        except psutil.Error:
            continue
    return out


class Sampler(threading.Thread):
    """Every ``every`` seconds: each worker's peak RSS and CPU, the driver's peak RSS, the load average."""

    def __init__(self, parent: int, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.parent, self.every = parent, every
        self.workers: dict[int, dict[str, float]] = {}  # pid → hwm_mb, cpu_s, first, last (monotonic)
        self.threads: dict[int, dict[int, float]] = {}  # pid → thread → seconds run or waiting to run
        self.driver_hwm_mb = 0.0
        self.loads: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.every)

    def sample(self) -> None:
        now = time.monotonic()
        self.driver_hwm_mb = max(self.driver_hwm_mb, _status(self.parent).get("VmHWM", 0) / 1024)
        self.loads.append(os.getloadavg()[0])
        for pid in worker_pids(self.parent):
            status, cpu = _status(pid), _cpu(pid)
            if not status or cpu is None:
                continue
            w = self.workers.setdefault(pid, {"hwm_mb": 0.0, "cpu_s": 0.0, "first": now, "last": now})
            w["hwm_mb"] = max(w["hwm_mb"], status.get("VmHWM", 0) / 1024)
            w["cpu_s"], w["last"] = cpu, now
            threads = self.threads.setdefault(pid, {})
            threads.update(_demand(pid))  # a thread that ended keeps its last figure
            w["demand_s"] = max(threads.values(), default=0.0)  # the thread that runs the tasks
            w["demand_all_s"] = sum(threads.values())


def run_ingest(warc: Path, out: Path, overrides: Iterable[str], workers: int = 2, timeout: float = 4 * 3600) -> dict:
    """``curate ingest`` of one WARC on ``workers`` workers, sampled; the figures of the run."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(warc), "--output", str(out), "--quiet",
           "--workers", str(workers), *overrides]
    load_before = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid)
    sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        sampler.stop.set()
        sampler.join()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"ingest of {warc} failed ({proc.returncode}): {stderr[-3000:]}")
    stats = json.loads((out / "stats.json").read_text())
    parts = len(list((out / "artifacts" / "parsed").glob("part-*.parquet")))
    if not parts:
        parts = len(list((out / ".cache").rglob("parsed*/part-*.parquet")))
    workers_seen = sorted(sampler.workers.values(), key=lambda w: w["first"])
    return {"warc": str(warc), "wall_s": round(wall, 1), "cpu_s": stats.get("cpu_seconds"),
            "driver_cpu_s": stats.get("driver_cpu_seconds"), "pages": stats["in"]["documents"],
            "kept": stats["kept"]["documents"], "partitions": parts, "driver_peak_rss_mb": round(sampler.driver_hwm_mb),
            "workers": [{"peak_rss_mb": round(w["hwm_mb"]), "cpu_s": round(w["cpu_s"], 1),
                         "cpu_share": round(w["cpu_s"] / wall, 2), "busy": round(w.get("demand_s", 0) / wall, 2),
                         "busy_all_threads": round(w.get("demand_all_s", 0) / wall, 2)}
                        for w in workers_seen],
            "load_before": round(load_before, 1),
            "load_mean": round(sum(sampler.loads) / max(len(sampler.loads), 1), 1), "overrides": list(overrides)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.25, 0.5, 1.0], help="WARC sizes on disk, GB (default 0.25 0.5 1)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bench-warc-scale"), help="where the WARCs and the runs go")
    ap.add_argument("--build", action="store_true", help="write the WARCs (else reuse those in --dir)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="append each run's figures to this JSON-lines file")
    ap.add_argument("--keep", action="store_true", help="keep each run's output folder")
    argv = sys.argv[1:]
    overrides = [a for a in argv if "=" in a and not a.startswith("-")]  # ingest overrides, anywhere on the line
    args = ap.parse_args([a for a in argv if a not in overrides])
    args.dir.mkdir(parents=True, exist_ok=True)
    paths = {size: args.dir / f"crawl-{size:g}gb.warc.gz" for size in args.sizes}
    manifest = args.dir / "warcs.json"
    built = json.loads(manifest.read_text()) if manifest.exists() else {}
    if args.build:
        if not DATA.exists():
            raise SystemExit(f"{DATA} is missing: this benchmark needs the real pages of ../shared/data")
        t0 = time.perf_counter()
        pages = load_pages()
        done = build_warcs(pages, {p: int(size * GB) for size, p in paths.items()})
        built.update({str(p): {**v, "distinct_pages": len(pages)} for p, v in done.items()})
        manifest.write_text(json.dumps(built, indent=1))
        print(f"built {len(done)} WARCs from {len(pages):,} real pages in {time.perf_counter() - t0:.0f} s", flush=True)
    print("| WARC GB | MB decompressed | pages | partitions | MB per partition | peak RSS per worker MB | CPU-s/page | CPU s (driver) "
          "| wall s | busy per worker | CPU share per worker | load |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|---:|")
    for size, path in paths.items():
        info = built.get(str(path), {})
        r = run_ingest(path, args.dir / f"out-{size:g}gb", overrides, args.workers)
        r.update(size_gb=size, uncompressed_mb=round(info.get("uncompressed", 0) / 2**20))
        if args.json:
            with args.json.open("a") as fh:
                fh.write(json.dumps(r) + "\n")
        rss = " / ".join(f"{w['peak_rss_mb']:,}" for w in r["workers"])
        busy = " / ".join(f"{w['busy']:.2f}" for w in r["workers"])
        share = " / ".join(f"{w['cpu_share']:.2f}" for w in r["workers"])
        print(f"| {size:g} | {r['uncompressed_mb']:,} | {r['pages']:,} | {r['partitions']} | {r['uncompressed_mb'] / r['partitions']:.0f} | {rss} | {r['cpu_s'] / r['pages']:.4f} | "
              f"{r['cpu_s']:,.0f} ({r['driver_cpu_s']:,.0f}) | {r['wall_s']:,.0f} | {busy} | {share} | {r['load_mean']} |", flush=True)
        if not args.keep:
            shutil.rmtree(args.dir / f"out-{size:g}gb", ignore_errors=True)


if __name__ == "__main__":
    main()
