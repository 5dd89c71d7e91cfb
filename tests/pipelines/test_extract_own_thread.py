"""Ingest's extraction frees Resiliparse's trees on the thread that parsed them, whoever holds the
frames of the task's thread (a Dask worker's profiler takes them and lets go of them on its event
loop: "HTMLTreePy is unsendable, but is being dropped on another thread", and the tree leaked)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pipelines.kit import Artifact
from pipelines.own_thread import on_own_thread
from pipelines.stages.ingest_extract import extract_frame
from tests.pipelines.test_ingest_extract_link import PAGE, _parsed

REPO = Path(__file__).resolve().parents[2]


def test_trees_are_freed_on_the_thread_that_parsed_them(tmp_path, capfd, monkeypatch):
    pages = [PAGE, PAGE.replace("<pre><code>x = 1</code></pre>", "<div class='hljs'>y</div>"), "<p>x</p>"]
    parsed = _parsed(tmp_path, [{"id": f"p{i}", "source": "web", "html": p} for i, p in enumerate(pages)])
    df, html = parsed.read_part(0), Artifact(parsed.path / "html").read_part(0)
    held: list = []  # the frames a sampling profiler took from the task's thread, let go of on another

    def sample(frame, event, arg):
        if event == "return" and any(type(v).__name__ == "HTMLTree" for v in frame.f_locals.values()):
            held.append(frame)
        return sample

    def task():
        sys.settrace(sample)  # this thread only, as Dask samples only the threads running tasks
        try:
            return extract_frame(df, html, "resiliparse_routed", "qwen", 0)
        finally:
            sys.settrace(None)

    dropped: list[str] = []  # errors of objects freed where they cannot be: Python's unraisable hook
    monkeypatch.setattr(sys, "unraisablehook", lambda u: dropped.append(str(u.exc_value)))
    with ThreadPoolExecutor(1) as pool:
        out, n, tags = pool.submit(task).result()
    held.clear()  # on this thread: the last reference to whatever the frames hold
    gc.collect()
    assert n == 3 and out.set_index("doc_id").loc["p0", "text"].startswith("A paragraph")
    assert int(tags.set_index("doc_id").loc["p0", "pre_blocks"]) == 1
    assert dropped == [] and "unsendable" not in capfd.readouterr().err


def test_own_thread_raises_the_error_with_its_frames_cleared():
    made_on: list = []

    def fail(marker):
        made_on.append(threading.get_ident())
        raise ValueError(marker)

    with pytest.raises(ValueError, match="bad page") as info:
        on_own_thread(fail, "bad page")
    assert made_on != [threading.get_ident()]
    tb = info.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code is fail.__code__ and tb.tb_frame.f_locals == {}


#: run in a process of its own: what is printed when a tree is dropped on another thread goes to its stderr
CYCLE = """
import gc
from resiliparse.parse.html import HTMLTree
from pipelines.own_thread import on_own_thread

def title(page):
    tree = HTMLTree.parse(page)
    try:
        raise ValueError("no main content")
    except ValueError as err:
        kept = err  # this frame holds its own error, whose traceback holds this frame: a cycle, with the tree in it
    return tree.title

gc.disable()  # the collector runs here, on the caller's thread, and not before (as on a worker's event loop)
print(on_own_thread(title, "<title>T</title><p>x</p>"))
gc.collect()
"""

#: the same cycle, moved to the oldest generation by a collection while the call still held it
PROMOTED = CYCLE.replace("    return tree.title", "    gc.collect()\n    return tree.title")

#: an error raised while another was handled: the tree is in a frame of the first one's traceback only
CHAINED = """
import gc
from resiliparse.parse.html import HTMLTree
from pipelines.own_thread import on_own_thread

def parse(page):
    tree = HTMLTree.parse(page)
    raise ValueError(f"no main content in {tree.title!r}")

def extract(page):
    try:
        parse(page)
    except ValueError:
        raise RuntimeError("extraction failed")

try:
    on_own_thread(extract, "<title>T</title><p>x</p>")
except RuntimeError as err:
    print(err, "|", err.__context__)
gc.collect()
"""


@pytest.mark.parametrize(
    ("code", "printed"),
    [(CYCLE, "T"), (PROMOTED, "T"), (CHAINED, "extraction failed | no main content in 'T'")],
    ids=["reference-cycle", "cycle-in-oldest-generation", "chained-error"],
)
def test_no_tree_made_on_the_own_thread_is_dropped_on_the_callers(code, printed):
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == printed
    assert "unsendable" not in done.stderr, done.stderr
