"""``curate``: one CLI, one dispatch table.

    curate run RECIPE.yaml --input PATH... --output RUN_DIR [key=value ...]
    curate <stage> --input PATH --output STAGE_DIR [--config RECIPE.yaml] [key=value ...]
    curate stats RUN_DIR
    curate <command> ...   (train-classifier, manifest, report, verify)

Stage names use dashes on the command line (``exact-dedup``); ``key=value`` overrides use the
recipe's keys (``minhash_dedup.threshold=0.7`` for ``run``, ``threshold=0.7`` or
``phases.pretrain_phase1.budget=…`` for one stage); they are checked against the recipe's schema
before anything runs, and a key that does not exist yet needs a leading ``+``.

Exit codes (one line on stderr each, no traceback; a bug in curate prints its traceback and ends
with 70): see :data:`pipelines.exit_codes.EXIT_CODES` and :mod:`pipelines.cli_end`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path

from curation.config import ConfigError
from pipelines.cli_end import ended
from pipelines.cli_words import curate_version, split_overrides, suggest_command
from pipelines.commands import add_module_parsers
from pipelines.console_log import configure_console
from pipelines.recipe import profiles
from pipelines.scheduler_choice import memory_arg
from pipelines.signals import catch_sigterm, exit_process, finished, hold_until_exit, restore_sigterm
from pipelines.stage_help import stage_help
from pipelines.stages import STAGES

# Light imports only: a spawned worker imports the driver's __main__ (this module under `python -m pipelines.cli`,
# or `curate`, which imports it) before it joins, and pandas, pyarrow and distributed here made each worker import
# them on the way (benchmarks/recipe). The rest is imported where it is used.

log = logging.getLogger("curate")

#: Extra commands: name → module with ``add_arguments(parser)`` and ``main(args) -> int``.
COMMANDS: dict[str, str] = {
    "train-classifier": "pipelines.commands.train_classifier",
    "export": "pipelines.commands.export",
    "manifest": "pipelines.commands.manifest",
    "report": "pipelines.commands.report",
    "verify": "pipelines.commands.verify",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; for ``command`` ``run``, ``stats`` or a stage, the extra commands' parsers
    are left bare (their modules import trainers and models: ~0.5 CPU-s a run does not need), and
    for an extra command, the others'."""
    parser = argparse.ArgumentParser(prog="curate", description="Pretraining-data curation (GLM-4.5 recipe) on Dask.")
    parser.add_argument("--version", action="version", version=f"curate {curate_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run every enabled stage of a recipe")
    run.add_argument("recipe", help="recipe YAML (e.g. pipelines/configs/glm45.yaml)")
    _common(run, source=True)
    for name in STAGES:
        words = stage_help(name) if (command or "").replace("-", "_") == name else (None, None)  # imports the stage
        p = sub.add_parser(name.replace("_", "-"), help=f"run the {name} stage alone", description=words[0], epilog=words[1])
        p.add_argument("--config", default=None, help="recipe YAML (default: the embedded glm45 recipe)")
        _common(p, source=name == "ingest")
    sub.add_parser("help", help="these commands; curate help COMMAND: that command's options (as COMMAND --help)")
    stats = sub.add_parser("stats", help="print the funnel of a run")
    stats.add_argument("run_dir", type=Path, help="a run folder (curate run's --output)")
    stats.add_argument("--json", action="store_true", help="print the stats (with --mixture: the phases) as JSON")
    stats.add_argument("--mixture", action="store_true", help="per phase: each group's planned and replayed tokens, shares, epochs, cap")
    stats.add_argument("--check", action="store_true", help="exit 1 when the run did not finish or holds stage folders it left out")
    if command in ("run", "stats") or (command or "").replace("-", "_") in STAGES:
        for name in COMMANDS:
            sub.add_parser(name)
    elif command in COMMANDS:  # its own parser; the others bare (an export need not import the trainers)
        for name, module in COMMANDS.items():
            if name == command:
                add_module_parsers(sub, {name: module}, "handler")
            else:
                sub.add_parser(name)
    else:
        add_module_parsers(sub, COMMANDS, "handler")
    return parser


def _common(p: argparse.ArgumentParser, source: bool) -> None:  # source: --source in the help (run, ingest; others refuse it)
    p.add_argument("--input", nargs="+", action="extend", required=True,
                   help="files, folders, globs or @list.txt (one path a line; --input may be repeated); a stage folder for later stages")
    p.add_argument("--output", required=True, type=Path, help="run folder (run) or stage folder (one stage)")
    p.add_argument("--source", default=None, help="ingest: the source of inputs that carry none (web, code, math_science, …)" if source else argparse.SUPPRESS)
    p.add_argument("--scheduler", default=None, help="tcp://host:8786 or the --scheduler-file JSON of an existing cluster "
                   "(waited for while it is written), 'synchronous' for no cluster")
    p.add_argument("--workers", type=_workers_arg, default=None, help="workers of the embedded LocalCluster: ≥ 1 or auto (one per core); default: a LocalCluster "
                   "with one per core, or one process for inputs under cluster.min_input_mb (16 MiB)")
    p.add_argument("--memory-limit", type=memory_arg, default="auto", help="memory limit per worker of the embedded LocalCluster (auto, 0 = none, or e.g. 4GB)")
    p.add_argument("--profile", default="auto", help="settings for a kind of machine, applied before key=value overrides: "
                   f"{', '.join(profiles())}, or auto (default: gpu where a CUDA device is present, else cpu)")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="where stages keep their resumable sub-steps (parsed inputs, embeddings …); default: OUTPUT/.cache. "
                        "One folder given to several runs lets them share those steps")
    p.add_argument("--dry-run", action="store_true", help="print the resolved config and the plan, run nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bars, warnings only")
    p.set_defaults(overrides=[])
    p.usage = p.format_usage().removeprefix("usage: ").rstrip() + " [key=value ...]"
    p.epilog = ("key=value ...: override any recipe key, anywhere on the line (run: stage.key=value, e.g. "
                "minhash_dedup.threshold=0.8; one stage: its own keys, e.g. threshold=0.8); +key=value adds a key"
                + (f". {p.epilog}" if p.epilog else ""))


def _workers_arg(text: str) -> int | str:
    """An int ≥ 1, or ``"auto"`` as given (not None: it asks for a cluster, see ``choose_scheduler``)."""
    from pipelines.cluster import check_workers

    try:
        return check_workers(text) or "auto"
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--workers = ")) from None


#: Environment for the CLI and the worker processes it starts: offline models, quiet libraries.
QUIET_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


def main(argv: list[str] | None = None) -> int:
    """``curate``; with ``argv`` None (this process's command line) the process ends here, a stop
    while it exits said in one line too (:func:`pipelines.signals.exit_process`)."""
    code = _main(argv)
    return code if argv is not None else exit_process(code)


def _main(argv: list[str] | None) -> int:
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["help"]:  # curate help [COMMAND]: the commands, or one command's --help
        words = [*words[1:2], "--help"]
    command = next((w for w in words if not w.startswith("-")), None)
    parser = build_parser(command)
    suggest_command(parser, command)
    args, extra = parser.parse_known_args(words)
    split_overrides(parser, args, extra)
    configure_console(getattr(args, "quiet", False))  # and the embedded cluster's workers: pipelines.console_log
    previous = catch_sigterm()
    try:
        if args.command == "stats":
            return _stats(args)
        if hasattr(args, "handler"):
            return int(args.handler(args) or 0)
        return _run(args)
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - every failure and stop ends in one line and its exit code
        return ended(args.command, exc)
    finally:
        if argv is None:  # this process's command: a stop until the process exits says one line too
            hold_until_exit()
        else:
            restore_sigterm(previous)


def _run(args: argparse.Namespace) -> int:
    from curation.ingest.discover import find_inputs
    from pipelines.cluster import check_workers, open_client
    from pipelines.dry_run import dry_run
    from pipelines.io import docs_columns
    from pipelines.kit.input_order import check_stage_input
    from pipelines.kit.stage import check_requires
    from pipelines.output_guards import check_destination, run_recipe_note
    from pipelines.plan_checks import check_plan
    from pipelines.profile_choice import profile_settings
    from pipelines.recipe import absolute_model_paths, check_configs, load_recipe, resolve_profile, stage_config
    from pipelines.runner import enabled_stages, run_recipe, run_stage
    from pipelines.safety import check_folder_path, check_overlap, check_replaceable
    from pipelines.scheduler_choice import command_scheduler
    from pipelines.stages import load_stage
    from pipelines.summary import funnel_table

    stage = None if args.command == "run" else args.command.replace("-", "_")
    recipe_path = args.recipe if stage is None else args.config
    profile, why = resolve_profile(args.profile)
    chosen, notes = profile_settings(profile, why, recipe_path, stage)
    recipe = load_recipe(recipe_path, [*chosen, *args.overrides], stage=stage, settled=len(chosen))
    recipe["profile"] = {"name": profile, "why": why, **({"notes": notes} if notes else {})}
    for note in notes:
        log.warning("%s", note)
    if not args.quiet and not args.dry_run:
        other = "cpu" if profile == "gpu" else "gpu"
        print(f"curate: profile {profile} ({why}; --profile {other} for the other settings)", flush=True)
    if args.source:
        if stage not in (None, "ingest"):
            raise ConfigError(f"--source {args.source}: only ingest reads it (it names the source of raw records that carry "
                              f"none); {stage} reads a stage folder whose documents have theirs")
        recipe["stages"].setdefault("ingest", {})["source"] = args.source
    if stage is not None and any(re.fullmatch(rf"\+?(stages\.)?({stage}\.)?enabled=(false|False|no|0)", o) for o in args.overrides):
        raise ConfigError(f"enabled=false: curate {args.command} runs the {stage} stage whatever enabled says; leave it out")
    names = enabled_stages(recipe) if stage is None else [stage]
    absolute_model_paths(recipe, names)
    check_configs(recipe, names)
    check_plan(recipe, names)  # a column a setting reads that no earlier stage makes; settings that do nothing here
    check_destination(args.output, whole_run=stage is None)
    if stage is None or stage == "ingest":
        check_overlap(args.output, args.input)
        find_inputs(args.input)  # a missing or unreadable input fails here, before a cluster starts
    else:
        if len(args.input) != 1:
            raise ConfigError(f"{args.command} reads one stage folder; got {len(args.input)} inputs")
        check_overlap(args.output, args.input[:1])
        check_stage_input(stage, recipe, Path(args.input[0]))  # a run folder, a damaged or unfinished stage folder, before a cluster starts
        check_requires(st := load_stage(stage), Path(args.input[0]), docs_columns(Path(args.input[0])),  # and one without a column
                       stage_config(recipe, stage, st.config_cls))  # it or a setting of it (keep: highest:<column>) reads
        for note in st.input_notes(stage_config(recipe, stage, st.config_cls), Path(args.input[0])) if hasattr(st, "input_notes") else []:
            log.warning("%s: %s", stage, note)  # what the stage would say at its end of this input (mixture: a group it lacks)
    if stage is not None:
        check_replaceable(args.output, (stage,))
        if note := run_recipe_note(args.output, args.config):
            log.warning("%s", note)
    if args.cache_dir is not None:  # sub-steps are written there: the rules of an output
        check_destination(args.cache_dir, whole_run=True, option="--cache-dir")
        check_overlap(args.cache_dir, args.input if stage in (None, "ingest") else args.input[:1], option="--cache-dir")
        check_folder_path(args.cache_dir, option="--cache-dir")
    cluster = recipe.get("cluster") or {}
    workers = args.workers or check_workers(cluster.get("workers"), "cluster.workers")
    scheduler, recipe["scheduler"] = command_scheduler(args, args.input, cluster)
    if scheduler not in (None, "synchronous"):  # its workers have their own working folder: give them absolute paths
        args.input = [f"@{os.path.abspath(i[1:])}" if i.startswith("@") else os.path.abspath(i) + "/" * i.endswith("/") for i in args.input]
        args.output = Path(os.path.abspath(args.output))
        args.cache_dir = Path(os.path.abspath(args.cache_dir)) if args.cache_dir is not None else None
    if args.dry_run:
        return dry_run(recipe, names, args)
    if not args.quiet:
        print(f"curate: {recipe['scheduler']['name']} ({recipe['scheduler']['why']})", flush=True)
    with open_client(scheduler, workers, args.memory_limit) as client:
        if stage is None:
            results = run_recipe(recipe, args.input, args.output, client=client, quiet=args.quiet, cache_root=args.cache_dir)
        elif stage == "ingest":
            results = [run_stage(stage, recipe, stage_dir=args.output, inputs=args.input, client=client, quiet=args.quiet,
                                 cache_root=args.cache_dir)]
        else:
            results = [run_stage(stage, recipe, stage_dir=args.output, input_dir=Path(args.input[0]), client=client, quiet=args.quiet,
                                 cache_root=args.cache_dir)]
        finished(f"the run had finished: every stage and run.json are in place in {args.output}, the output is complete (curate "
                 f"stats --check exits 0)" if stage is None else f"the stage had finished: {args.output} is in place, complete")
    print(funnel_table([r.stats for r in results]))
    for made in dict.fromkeys(r.input_unchanged_after for r in results if r.input_unchanged_after):  # pipelines/restat.py
        print(f"reused: {', '.join(r.name for r in results if r.input_unchanged_after == made)} (their input came out "
              f"unchanged: {made} was made again with its output as before)")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from curation.stats.run_state import no_mixture_message, run_state
    from pipelines.safety import lock_holder
    from pipelines.summary import (
        funnel_table,
        load_run_stats,
        mixture_json,
        mixture_table,
        mixture_view,
        ran_alone,
    )

    if not Path(args.run_dir).is_dir():
        raise FileNotFoundError(f"{args.run_dir} is not a folder; give a run folder written by `curate run`")
    note, state = "", None
    if not ran_alone(args.run_dir):  # a run: how it stands (a stage run alone has no run record)
        state = run_state(args.run_dir)
        note = state.describe(lock_holder(Path(args.run_dir)) if state.status == "running" else None)
    if args.mixture:
        view = mixture_view(args.run_dir)
        if view is None:
            log.error("%s%s", no_mixture_message(args.run_dir, state), f"; {note}" if note else "")
            return 4
        print(json.dumps(mixture_json(view), indent=2, ensure_ascii=False) if args.json else mixture_table(view))
    else:
        stats = load_run_stats(args.run_dir)
        if not stats:
            log.error("%s has no finished stage folders (NN_<stage>/ with _SUCCESS)%s", args.run_dir, f"; {note}" if note else "")
            return 1 if args.check and note else 4  # --check: a run that stopped before its first stage did not finish
        print(json.dumps(stats, indent=2, ensure_ascii=False) if args.json else funnel_table(stats))
    if note:
        log.warning("%s: %s", args.run_dir, note)
    return 1 if args.check and note else 0


if __name__ == "__main__":
    sys.exit(main())
