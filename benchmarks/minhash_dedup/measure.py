"""Run a command and record its wall time and the peak RSS of every process in its tree."""

from __future__ import annotations

import resource
import subprocess
import time
from typing import Any

import psutil


def run_measured(cmd: list[str], env: dict[str, str] | None = None, poll: float = 0.05, log: str | None = None) -> dict[str, Any]:
    """Wall seconds, CPU seconds of the whole tree, return code and peak RSS (MiB) per process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    peaks: dict[int, dict[str, Any]] = {}
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for p in tree:
            try:
                rss = p.memory_info().rss / 2**20
                times = p.cpu_times()
                if p.pid not in peaks:
                    peaks[p.pid] = {"cmd": " ".join(p.cmdline())[:160], "peak_mib": 0.0}
                peaks[p.pid]["peak_mib"] = max(peaks[p.pid]["peak_mib"], rss)
                peaks[p.pid]["cpu_s"] = times.user + times.system
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        time.sleep(poll)
    rc = proc.wait()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Every process of the tree that its parent waited for counts in rusage; pool processes that
    # are not waited for only in the polled totals (last sample, up to ``poll`` s early).
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    polled = sum(p.get("cpu_s", 0.0) for p in peaks.values())
    if log:
        out.close()
    return {"cmd": " ".join(cmd), "rc": rc, "seconds": round(wall, 2), "cpu_seconds": round(max(cpu, polled), 2), "cpu_seconds_rusage": round(cpu, 2), "cpu_seconds_polled": round(polled, 2), "processes": peaks}


def worker_peaks(result: dict[str, Any], marker: str) -> list[float]:
    """Peak RSS (MiB) of the processes whose command line contains ``marker``."""
    return sorted((round(p["peak_mib"], 1) for p in result["processes"].values() if marker in p["cmd"]), reverse=True)
