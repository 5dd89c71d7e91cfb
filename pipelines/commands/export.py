"""Write what a trainer loads from a finished run: ``curate export megatron|datasets RUN --output DIR``.

``megatron``: per phase, megatron-core indexed datasets (``.bin``/``.idx``) and ``DIR/<phase>.data-args``
for Megatron-LM's ``--data-args-path`` (docs/export.md). ``datasets``: per phase, a folder that
``datasets.load_from_disk`` reads, rows in training order. Both read every shard once, checked
against its manifest, tokenize with the tokenizer the run counted with, and run one task per shard
on the cluster (``--workers``, ``--scheduler`` as for ``curate run``; without them, the shards of a
run under ``cluster.min_input_mb`` are exported in one process). A run with an incomplete stage
(:mod:`pipelines.incomplete`) is refused, exit 12, unless ``--allow-incomplete`` is given.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from pipelines.scheduler_choice import memory_arg

log = logging.getLogger("curate.export")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "format", choices=("megatron", "datasets"), help="megatron (.bin/.idx + data-args) or datasets (load_from_disk)"
    )
    parser.add_argument("run_dir", type=Path, help="a run folder written by `curate run`")
    parser.add_argument(
        "--output",
        type=Path,
        required=True,
        help="the export folder; an earlier export of the same run and settings there keeps the phases this one does not write",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="replace an earlier export in --output whole (another format, run or setting; its other phases are removed)",
    )
    parser.add_argument(
        "--phase",
        action="append",
        default=None,
        help="export this phase only (repeat for several; default: all); an earlier "
        "export of the run in --output keeps its other phases",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="export a run with an incomplete stage (an LLM judge's unanswered requests) as it is; export.json lists "
        "the stages under incomplete (default: refused, exit 12)",
    )
    parser.add_argument(
        "--eod-token",
        default="<|endoftext|>",
        help="the end-of-document token after every document (default <|endoftext|>)",
    )
    parser.add_argument(
        "--pad-token",
        default="<|vision_pad|>",
        help="megatron: the token that pads each best-fit sequence after its documents; megatron-core masks its loss "
        "(default <|vision_pad|>, Qwen's 151654; a special token other than --eod-token)",
    )
    parser.add_argument(
        "--truncation",
        choices=("none", "random"),
        default="none",
        help="datasets, pre-training phases: cut documents longer than seq_length at a seeded random offset (adds input_ids)",
    )
    parser.add_argument(
        "--scheduler", default=None, help="tcp://host:8786 for an existing cluster, 'synchronous' for no cluster"
    )
    parser.add_argument(
        "--workers",
        default=None,
        help="workers of the embedded LocalCluster (≥ 1 or auto: one per core); default: a "
        "LocalCluster, or one process for shards under cluster.min_input_mb (16 MiB)",
    )
    parser.add_argument(
        "--memory-limit",
        type=memory_arg,
        default="auto",
        help="memory limit per worker of the embedded LocalCluster (auto, 0 = none, or e.g. 4GB)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars, warnings only")


def main(args: argparse.Namespace) -> int:
    from pipelines.cluster import check_workers, open_client
    from pipelines.exports.common import check_something_to_train, export_folder, open_run
    from pipelines.exports.earlier import keep_phases, plan_earlier
    from pipelines.incomplete import IncompleteExportError, listed_incomplete
    from pipelines.io import write_json
    from pipelines.scheduler_choice import command_scheduler

    if args.truncation != "none" and args.format != "datasets":
        from curation.config import ConfigError

        raise ConfigError(
            f"--truncation {args.truncation} cuts the rows of a datasets export; a megatron export is cut "
            "into sequences by Megatron itself: leave it out, or export datasets"
        )
    if args.scheduler not in (None, "synchronous"):  # its workers stand in a folder of their own: absolute paths
        args.run_dir, args.output = Path(os.path.abspath(args.run_dir)), Path(os.path.abspath(args.output))
    run = open_run(args.run_dir, args.phase)
    # stages before the mixture that finished without every answer they asked for (run.json, the manifests)
    incomplete = listed_incomplete(run.run_dir, list(run.manifests.values()))
    if incomplete and not args.allow_incomplete:  # refused here: nothing computed, nothing changed
        raise IncompleteExportError(args.run_dir, incomplete)
    check_something_to_train(run)  # before the tokenizer is loaded or a cluster started
    if run.stale:  # a mixture folder given as it is, made before a stage before it was made again
        log.warning("%s", run.stale)
    _check_eod(run.tokenizer, args.eod_token)
    if args.format == "megatron":
        _check_blend_path(args.output)
        _check_eod(run.tokenizer, args.pad_token, "--pad-token", args.eod_token)
    settings = {
        "eod_token": args.eod_token,
        **({"truncation": args.truncation} if args.format == "datasets" else {"pad_token": args.pad_token}),
    }
    # refused here: nothing computed, nothing changed
    earlier = plan_earlier(args.output, run, args.format, settings, args.replace)
    workers = check_workers(args.workers)
    scheduler, choice = command_scheduler(args, [run.stage_dir / "shards"])
    if not args.quiet:
        print(f"curate export: {choice['name']} ({choice['why']})", flush=True)
    with (
        export_folder(args.output, run, args.format) as work,
        open_client(scheduler, workers, args.memory_limit) as client,
    ):
        if args.format == "megatron":
            from pipelines.exports.megatron import export_megatron

            out = export_megatron(
                run, work, args.output, client, eod_token=args.eod_token, pad_token=args.pad_token, quiet=args.quiet
            )
        else:
            from pipelines.exports.hf_datasets import export_datasets

            out = export_datasets(
                run, work, client, eod_token=args.eod_token, truncation=args.truncation, quiet=args.quiet
            )
        empty = {ph: p for ph, p in out["phases"].items() if p.get("empty")}
        if len(empty) == len(out["phases"]):  # a trainer given this export would train on nothing: no export, exit 4
            from curation.ingest.inputs import InputError

            raise InputError(
                f"{args.run_dir}: no phase exported has anything to train on, so nothing was written ("
                + "; ".join(f"{ph}: {p['empty']}" for ph, p in empty.items())
                + ")"
            )
        out["incomplete"] = incomplete  # a trainer's tooling checks it: [] when the run is complete
        write_json(work / "export.json", out)
        kept = keep_phases(earlier, work, out)
    for phase, p in out["phases"].items():
        if phase in kept:
            continue
        if p.get("empty"):
            log.warning("%s: %s", phase, p["empty"])
        else:
            log.info("%s: %s", phase, args.output / (p.get("data_args") or p["folder"]))
        for warning in p.get("warnings", []):
            log.warning("%s", warning)
    written = ", ".join(ph for ph in out["phases"] if ph not in empty and ph not in kept)
    how = "left out" if args.format == "megatron" else "a dataset of no rows"
    written += f"; {how}: " + ", ".join(f"{ph} ({left_out(p)})" for ph, p in empty.items()) if empty else ""
    written += f"; kept from the earlier export: {', '.join(kept)}" if kept else ""
    print(f"wrote {args.output}: {written} ({args.format}); see {args.output / 'export.json'}")
    if run.stale:  # said again under the export's own lines, where it is read
        log.warning("%s", run.stale)
    if incomplete:
        log.warning("%s", incomplete_warning(incomplete))
    return 0


def incomplete_warning(incomplete: list[dict[str, str]]) -> str:
    """The export's one line about a run with incomplete stages (``export.json``'s ``incomplete``).

    >>> incomplete_warning([{"stage": "edu_score", "reason": "3 annotation requests got no answer"}])[:80]
    'exported an incomplete run: edu_score (3 annotation requests got no answer); exp'
    """
    said = "; ".join(f"{u['stage']} ({u['reason']})" for u in incomplete)
    return (
        f"exported an incomplete run: {said}; export.json lists it under incomplete, so train on it only knowingly, "
        "or re-run the run when the judge answers and export again"
    )


def left_out(phase: dict) -> str:
    """Why a phase has nothing to train on, in a few words (``export.json``'s ``empty`` says it whole)."""
    replayed, samples = phase.get("replay_tokens"), phase.get("train_samples")
    if samples == 0 and replayed:
        return f"{replayed:,} tokens, fewer than one {phase['seq_length']:,}-token sample"
    return "replays no token"


def _check_eod(tokenizer: str, eod_token: str, option: str = "--eod-token", eod: str | None = None) -> None:
    """The run's tokenizer has ids and ``--eod-token`` (or ``--pad-token``, which must differ from the EOD) is one of
    its special tokens: a bad option, said before anything is written. An ordinary token (``hello``) is what documents'
    own text encodes to: Megatron would cut every document that holds it (the export would stop at the first, exit 4)."""
    from curation.config import ConfigError
    from curation.tokens import special_tokens, token_id

    try:
        token_id(tokenizer, eod_token)
    except ValueError as exc:
        if option == "--eod-token":
            raise ConfigError(str(exc)) from None
        raise ConfigError(
            f"{option} {eod_token!r}: tokenizer {tokenizer!r} has no such token; give one of its special tokens "
            "other than the EOD with --pad-token"
        ) from None
    special = special_tokens(tokenizer)
    default = "<|endoftext|>" if option == "--eod-token" else "<|vision_pad|>"
    if eod_token not in special:
        raise ConfigError(
            f"{option} {eod_token!r} is not a special token of tokenizer {tokenizer!r} but one that ordinary text "
            f"encodes to, so documents would hold it; its special tokens are {', '.join(special)} "
            f"(the default is {default})"
        )
    if eod is not None and eod_token == eod:
        raise ConfigError(
            f"{option} {eod_token!r} is the --eod-token: megatron-core masks the loss wherever a label is the pad, "
            "so every document's last position (its label the EOD) would go untrained; choose another special "
            f"token (the default is {default})"
        )


def _check_blend_path(output: Path) -> None:
    """Megatron-LM splits a ``--data-args-path`` file on whitespace: a prefix under a folder whose
    absolute path has a space would be read as two words (a weight and a path, shifted)."""
    from curation.config import ConfigError

    where = str(output.resolve())
    if any(c.isspace() for c in where):
        raise ConfigError(
            f"--output {where}: Megatron-LM reads --data-args-path as words split on whitespace, so a "
            "prefix under this folder would be read as two; choose an --output whose path has no spaces"
        )
