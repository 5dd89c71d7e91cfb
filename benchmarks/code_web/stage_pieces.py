"""Where code_web's CPU goes: the stage run alone, again and again in one warm process, against a
finished run, with its pieces timed.

    python benchmarks/code_web/stage_pieces.py RUN_DIR [--turns 6]

``RUN_DIR`` is a finished ``curate run`` (``bench_one_parse.py`` leaves one in its ``--work``
folder, ``run-this``). Each turn links the run's stage folders before code_web into a fresh folder
(not its ``.cache``: every turn scores the pages again) and runs code_web from code_quality's
output with ``--profile cpu`` in this process, one-process scheduler. The first turn pays the
imports and model loads that a whole recipe pays in earlier stages, so it is left out of the
figures. The pieces are functions code_web calls, each wrapped to add up its own CPU seconds per
turn (a piece called inside another is counted in both: ``score_frame`` holds the classifier, the
parses and the token counts). Prints the CPU seconds of each turn and, per piece, the mean per
turn after the first.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

STAGE, FOLDER, BEFORE = "code_web", "60_code_web", "50_code_quality"


def wrap(spent: collections.Counter, owner: Any, name: str) -> None:
    inner = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start

    setattr(owner, name, timed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--turns", type=int, default=6)
    args = ap.parse_args()
    if args.turns < 2:
        raise SystemExit("--turns: at least 2 (the first turn is left out)")
    os.chdir(ROOT)
    import classifiers.code_content as code_content
    import pipelines.io as pio
    import pipelines.stages.code_web as code_web
    from pipelines.cluster import open_client
    from pipelines.recipe import load_recipe, profile_overrides
    from pipelines.runner import run_stage

    spent: collections.Counter = collections.Counter()
    wrap(spent, code_content.CodeContentClassifier, "predict_pages")
    for name in ("score_frame", "block_score", "reparse_html", "parse", "count_tokens", "load_pages", "load_code_tags",
                 "all_windows", "code_blocks", "_annotate"):
        wrap(spent, code_web, name)
    wrap(spent, pio, "write_partition")
    for module in list(sys.modules.values()):  # the modules that imported write_partition by name
        if getattr(module, "__name__", "").startswith("pipelines.") and module is not pio and hasattr(module, "write_partition"):
            wrap(spent, module, "write_partition")

    recipe = load_recipe(ROOT / "pipelines" / "configs" / "glm45.yaml", profile_overrides("cpu"))
    work = Path(tempfile.mkdtemp(prefix="code-web-pieces-"))
    turns = []
    try:
        for turn in range(args.turns):
            out = work / str(turn)
            out.mkdir()
            for d in args.run.iterdir():
                if d.is_dir() and d.name < FOLDER and not d.name.startswith("."):
                    os.symlink(d.resolve(), out / d.name)
            if turn == 1:
                spent.clear()
            start = time.process_time()
            with open_client("synchronous"):
                run_stage(STAGE, recipe, stage_dir=out / FOLDER, input_dir=args.run / BEFORE, run_dir=out, quiet=True,
                          cache_root=out / ".cache")
            turns.append(round(time.process_time() - start, 3))
            shutil.rmtree(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    later = turns[1:]
    print(f"code_web CPU-s per turn: {turns} (after the first: mean {sum(later) / len(later):.3f})")
    for name, seconds in spent.most_common():
        print(f"  {name:16s} {seconds / len(later):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
