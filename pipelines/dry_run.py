"""``curate run … --dry-run``: the resolved plan, printed as JSON, with each stage's required columns
checked against what the stages before it (or the input) provide, and what a real run would do with
each stage's folder (``status``: :mod:`pipelines.dry_run_status`); nothing runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from curation.config import ConfigError
from pipelines.stages import folder_name


def dry_run(recipe: dict[str, Any], names: list[str], args: argparse.Namespace) -> int:
    """Print the plan; check each stage's required columns, and those its settings read (``keep:
    highest:<column>``), against what the input and the stages before it produce."""
    from pipelines.kit.stage import column_problems
    from pipelines.recipe import stage_config
    from pipelines.stages import load_stage

    stages = [load_stage(name) for name in names]
    cfgs = [stage_config(recipe, name, stage.config_cls) for name, stage in zip(names, stages, strict=True)]
    problems = column_problems(zip(stages, cfgs, strict=True), input_columns(names[0], args))
    from pipelines.dry_run_status import planned_status

    plan = []
    for name, stage, cfg, status in zip(names, stages, cfgs, planned_status(recipe, names, args), strict=True):
        target = args.output / folder_name(name) if args.command == "run" else args.output
        plan.append({"stage": name, "output": str(target), "status": status, "config": cfg.to_dict(), "requires": list(stage.requires)})
    print(json.dumps({"inputs": args.input, "profile": recipe.get("profile"), "scheduler": recipe.get("scheduler"), "plan": plan},
                     indent=2, default=str, ensure_ascii=False))
    if problems:
        raise ConfigError("; ".join(problems))
    return 0


def input_columns(first: str, args: argparse.Namespace) -> set[str] | None:
    """Columns available to the first stage: the document schema after ingest, else the input's."""
    from curation.ingest.inputs import InputError
    from curation.schema import DOC_COLUMNS
    from pipelines.io import docs_dir

    if first == "ingest":
        return set(DOC_COLUMNS)
    try:
        part = next(iter(sorted(docs_dir(Path(args.input[0])).glob("part-*.parquet"))))
        import pyarrow.parquet as pq

        return set(pq.read_schema(part).names)
    except (StopIteration, InputError, OSError):
        return None
