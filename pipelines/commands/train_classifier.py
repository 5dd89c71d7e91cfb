"""Train a classifier from a run's data or labelled files: ``curate train-classifier KIND …``.

Each kind lives in its own module with ``add_arguments(parser)`` and ``main(args) -> int``;
kinds whose module is not installed are left out of ``--help``.
"""

from __future__ import annotations

import argparse

from pipelines.commands import add_module_parsers

#: kind → module
TRAINERS: dict[str, str] = {
    "edu": "pipelines.commands.train_edu",
    "linear": "pipelines.commands.train_linear",
    "web-embedding": "pipelines.commands.train_web_embedding",
    "code-content": "pipelines.commands.train_code_content",
    "code-quality": "pipelines.commands.train_code_quality",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kind", required=True)
    add_module_parsers(sub, TRAINERS, "trainer")


#: The options by which a trainer reads files: its --output may be none of them, nor inside one.
INPUT_OPTIONS = ("input", "run", "labels", "labelled", "positive", "negative", "eval", "annotations", "embeddings", "card")


def main(args: argparse.Namespace) -> int:
    from pipelines.output_guards import check_model_output

    if getattr(args, "output", None) is not None:
        inputs = [v for name in INPUT_OPTIONS for v in _listed(getattr(args, name, None))]
        check_model_output(args.output, inputs)
    return int(args.trainer(args) or 0)


def _listed(value: object) -> list:
    return [] if value is None else list(value) if isinstance(value, list) else [value]
