"""``curate``: one CLI, one dispatch table.

    curate run RECIPE.yaml --input PATH... --output RUN_DIR [key=value ...]
    curate <stage> --input PATH --output STAGE_DIR [--config RECIPE.yaml] [key=value ...]
    curate stats RUN_DIR
    curate <command> ...   (train-classifier, manifest, report, verify)

Stage names use dashes on the command line (``exact-dedup``); ``key=value`` overrides use the
recipe's keys (``minhash_dedup.threshold=0.7`` for ``run``, ``threshold=0.7`` for one stage).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import re
import sys
from pathlib import Path
from typing import Any

from curation.config import ConfigError
from pipelines.runner import WorkerLostError
from pipelines.stages import STAGES, folder_name

log = logging.getLogger("curate")

#: Extra commands: name → module with ``add_arguments(parser)`` and ``main(args) -> int``.
COMMANDS: dict[str, str] = {
    "train-classifier": "pipelines.commands.train_classifier",
    "manifest": "pipelines.commands.manifest",
    "report": "pipelines.commands.report",
    "verify": "pipelines.commands.verify",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="curate", description="Pretraining-data curation (GLM-4.5 recipe) on Dask.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run every enabled stage of a recipe")
    run.add_argument("recipe", help="recipe YAML (e.g. pipelines/configs/glm45.yaml)")
    _common(run)
    for name in STAGES:
        p = sub.add_parser(name.replace("_", "-"), help=f"run the {name} stage alone")
        p.add_argument("--config", default=None, help="recipe YAML (default: the embedded glm45 recipe)")
        _common(p)
    stats = sub.add_parser("stats", help="print the funnel of a run")
    stats.add_argument("run_dir", type=Path)
    stats.add_argument("--json", action="store_true", help="print the stats as JSON")
    for cmd, module in COMMANDS.items():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        p = sub.add_parser(cmd, help=(mod.__doc__ or "").strip().splitlines()[0] if mod.__doc__ else None)
        mod.add_arguments(p)
        p.set_defaults(handler=mod.main)
    return parser


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", nargs="+", required=True, help="files, folders or globs (a stage folder for later stages)")
    p.add_argument("--output", required=True, type=Path, help="run folder (run) or stage folder (one stage)")
    p.add_argument("--source", default=None, help="source of inputs that carry none (web, code, math_science, …)")
    p.add_argument("--scheduler", default=None, help="tcp://host:8786 for an existing cluster, 'synchronous' for no cluster")
    p.add_argument("--workers", type=int, default=None, help="workers of the embedded LocalCluster (default: one per core)")
    p.add_argument("--memory-limit", default="auto", help="memory limit per worker of the embedded LocalCluster")
    p.add_argument("--dry-run", action="store_true", help="print the resolved config and the plan, run nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bars, warnings only")
    p.set_defaults(overrides=[])


#: Environment for the CLI and the worker processes it starts: offline models, quiet libraries.
QUIET_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


def main(argv: list[str] | None = None) -> int:
    import os

    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    _split_overrides(parser, args, extra)
    quiet = getattr(args, "quiet", False)
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    for noisy in ("distributed", "bokeh", "tornado"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        if args.command == "stats":
            return _stats(args)
        if hasattr(args, "handler"):
            return int(args.handler(args) or 0)
        return _run(args)
    except (ConfigError, ValueError, FileNotFoundError, KeyError) as exc:
        log.error("%s", exc)
        return 2
    except WorkerLostError as exc:
        log.error("%s", exc)
        return 3


_OVERRIDE = re.compile(r"^[A-Za-z_][\w.]*=")


def _split_overrides(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> None:
    """``key=value`` words anywhere on the line are overrides (also after ``--input a b``)."""
    bad = [e for e in extra if not _OVERRIDE.match(e)]
    if bad or (extra and not hasattr(args, "overrides")):
        parser.error(f"unrecognized arguments: {' '.join(bad or extra)}")
    if hasattr(args, "overrides"):
        inputs = getattr(args, "input", None) or []
        moved = [i for i in inputs if _OVERRIDE.match(i) and not Path(i).exists()]
        args.input = [i for i in inputs if i not in moved]
        if not args.input:
            parser.error("--input needs at least one path")
        args.overrides = [*moved, *extra]


def _run(args: argparse.Namespace) -> int:
    from pipelines.cluster import open_client
    from pipelines.recipe import load_recipe
    from pipelines.runner import enabled_stages, run_recipe, run_stage
    from pipelines.summary import funnel_table

    stage = None if args.command == "run" else args.command.replace("-", "_")
    recipe_path = args.recipe if stage is None else args.config
    recipe = load_recipe(recipe_path, args.overrides, stage=stage)
    if args.source:
        recipe["stages"].setdefault("ingest", {})["source"] = args.source
    names = enabled_stages(recipe) if stage is None else [stage]
    if args.dry_run:
        _dry_run(recipe, names, args)
        return 0
    cluster = recipe.get("cluster") or {}
    with open_client(args.scheduler, args.workers or cluster.get("workers"), args.memory_limit) as client:
        if stage is None:
            results = run_recipe(recipe, args.input, args.output, client=client, quiet=args.quiet)
        elif stage == "ingest":
            results = [run_stage(stage, recipe, stage_dir=args.output, inputs=args.input, client=client, quiet=args.quiet)]
        else:
            if len(args.input) != 1:
                raise ConfigError(f"{args.command} reads one stage folder; got {len(args.input)} inputs")
            results = [run_stage(stage, recipe, stage_dir=args.output, input_dir=Path(args.input[0]), client=client, quiet=args.quiet)]
    print(funnel_table([r.stats for r in results]))
    return 0


def _dry_run(recipe: dict[str, Any], names: list[str], args: argparse.Namespace) -> None:
    from pipelines.recipe import stage_config
    from pipelines.stages import load_stage

    plan = []
    for name in names:
        cfg = stage_config(recipe, name, load_stage(name).config_cls)
        target = args.output / folder_name(name) if args.command == "run" else args.output
        plan.append({"stage": name, "output": str(target), "config": cfg.to_dict()})
    print(json.dumps({"inputs": args.input, "plan": plan}, indent=2, default=str))


def _stats(args: argparse.Namespace) -> int:
    from pipelines.summary import funnel_table, load_run_stats

    stats = load_run_stats(args.run_dir)
    if not stats:
        log.error("%s has no finished stage folders (NN_<stage>/ with _SUCCESS)", args.run_dir)
        return 2
    print(json.dumps(stats, indent=2) if args.json else funnel_table(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
