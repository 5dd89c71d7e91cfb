"""Run a benchmark script's ``--here OUT`` half in an earlier revision's tree and in this one, one
after the other in one call, and read back both outcome files (``<stem>_before.json``,
``<stem>_after.json`` under ``out``): the before/after comparisons of this folder share it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def before_and_after(script: str, before: str, out: Path, stem: str) -> tuple[Any, Any]:
    """The outcomes of ``script --here`` run on revision ``before`` (``git archive``) and on this tree."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(f"git -C {ROOT} archive {before} | tar -x -C {tmp}", shell=True, check=True)
        for name, tree in (("before", tmp), ("after", str(ROOT))):
            used = _children_cpu()
            subprocess.run([sys.executable, script, "--here", str(out / f"{stem}_{name}.json")], cwd=tree, check=True,
                           env={**os.environ, "PYTHONPATH": tree})
            print(f"{name}: {_children_cpu() - used:.1f} CPU-s", file=sys.stderr)
    b, a = (json.load((out / f"{stem}_{n}.json").open()) for n in ("before", "after"))
    return b, a


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def outcomes(script: str, doc: str | None, stem: str, run_here: Any) -> tuple[Path, Any, Any] | None:
    """A before/after script's command line (``--before REV``, ``--out DIR``): its two trees' outcomes
    and the folder they are in; None when this process is a tree's half (``--here OUT``, run by
    :func:`before_and_after`), which ``run_here(OUT)`` writes."""
    import argparse

    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="HEAD", help="git revision of the code to compare with (default HEAD)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "_work" / "code_quality"))
    ap.add_argument("--here", help=argparse.SUPPRESS)  # internal: write this tree's outcomes to the file given
    args = ap.parse_args()
    if args.here:
        run_here(Path(args.here))
        return None
    out = Path(args.out)
    return (out, *before_and_after(script, args.before, out, stem))


def report(out: Path, name: str, lines: list[str]) -> None:
    """Write the comparison's lines to ``out/name`` and print them."""
    text = "\n".join(lines)
    (out / name).write_text(text + "\n")
    print(text)
