"""Answers an interrupted annotation received are cached: the next run asks only for the rest.

A slow OpenAI-compatible server on 127.0.0.1 counts the requests per document. A run is cut short
by SIGINT or SIGTERM (sent to the main thread once the server has answered a few requests), or a
process annotating is killed outright (SIGKILL, as a worker is); the same documents are then
annotated again through the same cache folder, and the server must see only the documents it had
not answered, with the scores an uninterrupted run gets.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from classifiers.annotation import AnnotationCache, get_annotator
from classifiers.annotation.openai import OpenAIAnnotator
from classifiers.rubrics import get_rubric
from curation.text import text_hash
from pipelines.signals import Terminated, catch_sigterm, restore_sigterm
from tests.helpers import serve_loopback

EDU = get_rubric("edu")
ROOT = Path(__file__).resolve().parents[2]
DOCS = [f"Document {i}: the derivative of energy with respect to time, part {i}." for i in range(24)]


class SlowJudge:
    """Answers ``/v1/chat/completions`` after ``delay_s`` with a score from the document's hash.

    ``seen`` counts requests per document, ``answered`` lists the documents answered (response
    written), in order. ``after(k, fn)`` calls ``fn`` once the k-th answer is written; with
    ``hold_after`` set, requests beyond that many wait until ``release`` is set.
    """

    def __init__(self, delay_s: float = 0.2, hold_after: int | None = None) -> None:
        self.delay_s = delay_s
        self.hold_after = hold_after
        self.release = threading.Event()
        self.seen: Counter[str] = Counter()
        self.answered: list[str] = []
        self.lock = threading.Lock()
        self._trigger: tuple[int, Any] | None = None
        self.started = 0

    def after(self, k: int, fn: Any) -> None:
        self._trigger = (k, fn)

    def reset(self) -> None:
        with self.lock:
            self.seen.clear()
            self.answered.clear()
            self.started = 0
            self._trigger = None
            self.hold_after = None
            self.release.set()

    def __enter__(self) -> SlowJudge:
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                prompt = "\n".join(m["content"] for m in body["messages"])
                m = re.search(r"<document>\n(.*)\n</document>", prompt, re.DOTALL)
                doc = m.group(1) if m else prompt
                with judge.lock:
                    judge.seen[doc] += 1
                    judge.started += 1
                    held = judge.hold_after is not None and judge.started > judge.hold_after
                if held:
                    judge.release.wait(60)
                time.sleep(judge.delay_s)
                score = int(hashlib.md5(doc.encode()).hexdigest(), 16) % 6
                data = json.dumps({
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": f"Fine.\nEducational score: {score}"},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                }).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client is gone (killed)
                    return
                with judge.lock:
                    judge.answered.append(doc)
                    fire = judge._trigger if judge._trigger and len(judge.answered) == judge._trigger[0] else None
                if fire:
                    fire[1]()

        self.httpd, self.url = serve_loopback(Handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def judge_config(url: str, cache_dir: Path) -> dict[str, Any]:
    return {"backend": "openai", "model": "judge-m", "base_url": url, "tokenizer": "chars", "concurrency": 2,
            "backoff_s": 0.01, "timeout_s": 30.0, "cache_dir": str(cache_dir)}


def uninterrupted(tmp_path: Path) -> Any:
    with SlowJudge(delay_s=0.0) as judge:
        res = get_annotator(judge_config(judge.url, tmp_path / "reference")).annotate(DOCS, EDU)
        assert sum(judge.seen.values()) == len(DOCS)
    return res


def assert_same(res: Any, ref: Any) -> None:
    np.testing.assert_array_equal(res.scores, ref.scores)
    assert res.raw == ref.raw and res.failures == ref.failures
    assert res.tokens_in == ref.tokens_in and res.tokens_out == ref.tokens_out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_keeps_its_answers_and_the_resume_asks_only_the_rest(tmp_path, signum):
    main = threading.main_thread().ident
    previous = catch_sigterm()  # as the CLI does: SIGTERM unwinds like Ctrl-C
    try:
        with SlowJudge(delay_s=0.3) as judge:
            ann = get_annotator(judge_config(judge.url, tmp_path / "cache"))
            judge.after(5, lambda: signal.pthread_kill(main, signum))  # a few answers in, the chunk (64) far from done
            with pytest.raises(KeyboardInterrupt if signum == signal.SIGINT else Terminated):
                ann.annotate(DOCS, EDU)
            first = dict(judge.seen)
            assert 5 <= len(first) < len(DOCS) and max(first.values()) == 1
            cached = AnnotationCache(tmp_path / "cache").get(ann.model_id, EDU.version, [text_hash(d) for d in DOCS])
            # every request sent was answered (the requests in flight finish) and is in the cache
            assert {text_hash(d) for d in first} == set(cached)

            judge.reset()
            res = get_annotator(judge_config(judge.url, tmp_path / "cache")).annotate(DOCS, EDU)
            again = dict(judge.seen)
    finally:
        restore_sigterm(previous)
    assert not set(again) & set(first), "documents answered before the interruption were asked again"
    assert set(again) | set(first) == set(DOCS) and max(again.values()) == 1
    assert res.stats.cache_hits == len(first) and res.stats.requests == len(DOCS) - len(first)
    assert_same(res, uninterrupted(tmp_path))


KILLED = """
import sys
from classifiers.annotation import get_annotator
from classifiers.rubrics import get_rubric
config, docs = {config!r}, {docs!r}
get_annotator(config).annotate(docs, get_rubric("edu"))
"""


def test_a_process_killed_outright_loses_at_most_the_last_seconds(tmp_path):
    """A worker killed with SIGKILL runs no ``finally``: answers are written while the chunk runs."""
    cache_dir = tmp_path / "cache"
    with SlowJudge(delay_s=0.05, hold_after=5) as judge:  # 5 answers, then the judge stalls
        config = judge_config(judge.url, cache_dir)
        proc = subprocess.Popen([sys.executable, "-c", KILLED.format(config=config, docs=DOCS)], cwd=ROOT)
        try:
            hashes = [text_hash(d) for d in DOCS]
            model_id = OpenAIAnnotator(model="judge-m", base_url=judge.url, tokenizer="chars").model_id
            deadline = time.time() + 30
            while len(AnnotationCache(cache_dir).get(model_id, EDU.version, hashes)) < 5 and time.time() < deadline:
                assert proc.poll() is None, "the annotating process ended early"
                time.sleep(0.2)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        first = list(judge.answered)
        assert len(first) == 5
        assert set(AnnotationCache(cache_dir).get(model_id, EDU.version, hashes)) == {text_hash(d) for d in first}

        judge.reset()
        res = get_annotator(config).annotate(DOCS, EDU)
        again = dict(judge.seen)
    assert not set(again) & set(first) and set(again) | set(first) == set(DOCS)
    assert res.stats.cache_hits == 5 and res.stats.requests == len(DOCS) - 5
    assert_same(res, uninterrupted(tmp_path))


def test_a_write_cut_short_leaves_the_cache_readable(tmp_path):
    """A batch whose transaction never committed (the writer killed inside it) is ignored; the rest reads."""
    cache = AnnotationCache(tmp_path)
    from classifiers.annotation import CacheRecord

    cache.put("m", "v", [CacheRecord("h1", 2.0, "Educational score: 2", None)])
    code = (
        "import os, signal, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('BEGIN IMMEDIATE')\n"
        "con.executemany('INSERT OR REPLACE INTO annotations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',\n"
        "                [('m', 'v', f'h{i}', 1.0, 'x' * 5000, None, 0, 0, 0.0) for i in range(2, 2000)])\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(cache.path)], check=False)
    got = AnnotationCache(tmp_path).get("m", "v", [f"h{i}" for i in range(1, 2000)])
    assert list(got) == ["h1"] and got["h1"].score == 2.0
    with sqlite3.connect(cache.path) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
