"""Write what a trainer loads from a finished run: ``curate export megatron|datasets RUN --output DIR``.

``megatron``: per phase, megatron-core indexed datasets (``.bin``/``.idx``) and ``DIR/<phase>.data-args``
for Megatron-LM's ``--data-args-path`` (docs/export.md). ``datasets``: per phase, a folder that
``datasets.load_from_disk`` reads, rows in training order. Both read every shard once, checked
against its manifest, tokenize with the tokenizer the run counted with, and run one task per shard
on the cluster (``--workers``, ``--scheduler`` as for ``curate run``; without them, the shards of a
run under ``cluster.min_input_mb`` are exported in one process).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from pipelines.scheduler_choice import memory_arg

log = logging.getLogger("curate.export")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=("megatron", "datasets"), help="megatron (.bin/.idx + data-args) or datasets (load_from_disk)")
    parser.add_argument("run_dir", type=Path, help="a run folder written by `curate run`")
    parser.add_argument("--output", type=Path, required=True, help="the export folder (replaced only if an earlier export wrote it)")
    parser.add_argument("--phase", action="append", default=None, help="export this phase only (repeat for several; default: all)")
    parser.add_argument("--eod-token", default="<|endoftext|>", help="the end-of-document token after every document (default <|endoftext|>)")
    parser.add_argument("--truncation", choices=("none", "random"), default="none",
                        help="datasets, pre-training phases: cut documents longer than seq_length at a seeded random offset (adds input_ids)")
    parser.add_argument("--scheduler", default=None, help="tcp://host:8786 for an existing cluster, 'synchronous' for no cluster")
    parser.add_argument("--workers", default=None, help="workers of the embedded LocalCluster (≥ 1 or auto: one per core); default: a "
                        "LocalCluster, or one process for shards under cluster.min_input_mb (16 MiB)")
    parser.add_argument("--memory-limit", type=memory_arg, default="auto",
                        help="memory limit per worker of the embedded LocalCluster (auto, 0 = none, or e.g. 4GB)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars, warnings only")


def main(args: argparse.Namespace) -> int:
    from pipelines.cluster import check_workers, open_client
    from pipelines.exports.common import export_folder, open_run
    from pipelines.scheduler_choice import command_scheduler

    if args.truncation != "none" and args.format != "datasets":
        from curation.config import ConfigError

        raise ConfigError(f"--truncation {args.truncation} cuts the rows of a datasets export; a megatron export is cut "
                          "into sequences by Megatron itself: leave it out, or export datasets")
    if args.scheduler not in (None, "synchronous"):  # its workers stand in a folder of their own: absolute paths
        args.run_dir, args.output = Path(os.path.abspath(args.run_dir)), Path(os.path.abspath(args.output))
    run = open_run(args.run_dir, args.phase)
    _check_eod(run.tokenizer, args.eod_token)
    if args.format == "megatron":
        _check_blend_path(args.output)
    workers = check_workers(args.workers)
    scheduler, choice = command_scheduler(args, [run.stage_dir / "shards"])
    if not args.quiet:
        print(f"curate export: {choice['name']} ({choice['why']})", flush=True)
    with export_folder(args.output, run, args.format) as work, open_client(scheduler, workers, args.memory_limit) as client:
        if args.format == "megatron":
            from pipelines.exports.megatron import export_megatron

            out = export_megatron(run, work, args.output, client, eod_token=args.eod_token, quiet=args.quiet)
        else:
            from pipelines.exports.hf_datasets import export_datasets

            out = export_datasets(run, work, client, eod_token=args.eod_token, truncation=args.truncation, quiet=args.quiet)
    for phase, p in out["phases"].items():
        if p.get("empty"):
            log.warning("%s: %s", phase, p["empty"])
        else:
            log.info("%s: %s", phase, args.output / (p.get("data_args") or p["folder"]))
        for warning in p.get("warnings", []):
            log.warning("%s", warning)
    empty = [ph for ph, p in out["phases"].items() if p.get("empty")]
    written = ", ".join(ph for ph in out["phases"] if ph not in empty) or "no phase with data"
    how = "left out" if args.format == "megatron" else "a dataset of no rows"
    written += f" (no data, {how}: {', '.join(empty)})" if empty else ""
    print(f"wrote {args.output}: {written} ({args.format}); see {args.output / 'export.json'}")
    return 0


def _check_eod(tokenizer: str, eod_token: str) -> None:
    """The run's tokenizer has ids and an ``--eod-token``: a bad option, said before anything is written."""
    from curation.config import ConfigError
    from curation.tokens import token_id

    try:
        token_id(tokenizer, eod_token)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _check_blend_path(output: Path) -> None:
    """Megatron-LM splits a ``--data-args-path`` file on whitespace: a prefix under a folder whose
    absolute path has a space would be read as two words (a weight and a path, shifted)."""
    from curation.config import ConfigError

    where = str(output.resolve())
    if any(c.isspace() for c in where):
        raise ConfigError(f"--output {where}: Megatron-LM reads --data-args-path as words split on whitespace, so a "
                          "prefix under this folder would be read as two; choose an --output whose path has no spaces")
