"""Test helpers: build stage folders from pandas frames, run one stage, check conservation."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curation.schema import DOC_COLUMNS
from pipelines.io import write_frame
from pipelines.recipe import load_recipe
from pipelines.runner import StageResult, run_stage
from pipelines.stages import STAGES


def docs_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A docs frame with every schema column; missing values filled (n_tokens from words)."""
    df = pd.DataFrame(rows)
    for col in DOC_COLUMNS:
        if col not in df.columns:
            df[col] = None
    if "doc_id" not in rows[0]:
        df["doc_id"] = [f"d{i}" for i in range(len(df))]
    df["source"] = df["source"].fillna("web")
    df["n_tokens"] = [len(str(t).split()) if pd.isna(n) else int(n) for t, n in zip(df["text"], df["n_tokens"], strict=True)]
    df["n_tokens"] = df["n_tokens"].astype("int64")
    return df


def make_stage_dir(path: Path, df: pd.DataFrame, nparts: int = 2) -> Path:
    """Write ``df`` as a finished stage folder with ``nparts`` docs parts (a stage's input)."""
    for i, part in enumerate(np.array_split(np.arange(len(df)), nparts)):
        write_frame(df.iloc[part].reset_index(drop=True), path / "docs" / f"part-{i:05d}.parquet")
    (path / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"test-{len(df)}-{nparts}"}))
    return path


def only(*names: str) -> list[str]:
    """Recipe overrides that run ingest and ``names`` alone, whatever stages the runner has.

    >>> only("exact_dedup")[:2]
    ['exact_dedup.enabled=true', 'repeated_lines.enabled=false']
    """
    unknown = sorted(set(names) - set(STAGES))
    if unknown:
        raise KeyError(f"unknown stages {unknown}; stages: {list(STAGES)}")
    return [f"{s}.enabled={'true' if s in names else 'false'}" for s in STAGES if s != "ingest"]


def run_one(
    name: str, input_dir: Path, out_dir: Path, overrides: list[str] | None = None, client: Any = None, recipe: str | None = None
) -> StageResult:
    """Run one stage synchronously (or on ``client``) with the embedded recipe + overrides; stage
    tests share one sub-step cache beside their outputs (``--cache-dir``), so a second output
    folder reuses the first one's steps."""
    import dask

    rec = load_recipe(recipe, [f"{name}.enabled=true", *(overrides or [])])
    cfg = {"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}
    if client is None:
        cfg["scheduler"] = "synchronous"
    with dask.config.set(cfg):
        return run_stage(name, rec, stage_dir=out_dir, input_dir=input_dir, client=client, quiet=True,
                         cache_root=Path(out_dir).parent / ".cache")


def read_parts(folder: Path) -> pd.DataFrame:
    files = sorted(Path(folder).glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def assert_conservation(input_dir: Path, stage_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Input ids = kept ids ∪ ledger ids, disjoint, each exactly once. Returns (kept, ledger)."""
    inp = read_parts(input_dir / "docs")
    kept = read_parts(stage_dir / "docs")
    ledger = read_parts(stage_dir / "ledger")
    kept_ids = list(kept["doc_id"]) if len(kept) else []
    led_ids = list(ledger["doc_id"]) if len(ledger) else []
    assert len(set(kept_ids)) == len(kept_ids), "a document is kept twice"
    assert len(set(led_ids)) == len(led_ids), "a document is in the ledger twice"
    assert not set(kept_ids) & set(led_ids), "a document is both kept and dropped"
    assert set(kept_ids) | set(led_ids) == set(inp["doc_id"]), "kept ∪ ledger differs from the input"
    assert (stage_dir / "_SUCCESS").exists()
    return kept, ledger


def slow_exact_dedup_run(recipe: str, raw: Path, out: Path, overrides: list[str], preamble: str = "") -> Any:
    """``curate run`` in a child process (its own session) whose exact_dedup removals sleep a minute,
    so a test can stop it mid-stage; returns the ``Popen`` (stderr piped, text)."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    script = (
        preamble
        + "import sys, time, pipelines.stages.exact_dedup as s\n"
        # a stage class defined here travels to the worker by value, so its slow removals run there
        "class Slow(s.ExactDedupStage):\n    def removals(self, group, cfg):\n        time.sleep(60)\n"
        "        return super().removals(group, cfg)\n"
        "s.STAGE = Slow()\n"
        "from pipelines.cli import main\n"
        f"sys.exit(main(['run', {recipe!r}, '--input', {str(raw)!r}, '--output', {str(out)!r},"
        f" '--workers', '1', '--quiet', {', '.join(repr(o) for o in overrides)}]))\n"
    )
    return subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, cwd=repo,
                            env={**os.environ, "PYTHONPATH": str(repo)}, start_new_session=True)


def serve_loopback(handler: type) -> tuple[Any, str]:
    """A threaded HTTP server on 127.0.0.1 (a free port) answering with ``handler``, served from a
    daemon thread: (server, its OpenAI-style base URL ``http://127.0.0.1:PORT/v1``)."""
    import threading
    from http.server import ThreadingHTTPServer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def importable_module(folder: Path, monkeypatch: Any, name: str, source: str) -> Iterator[str]:
    """A fixture body: ``source`` written as module ``name`` in ``folder``, importable for the test
    (``sys.path``), and forgotten after it (``sys.modules``)."""
    (folder / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
    yield name
    sys.modules.pop(name, None)
