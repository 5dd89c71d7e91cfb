"""docs/train_classifier.md names every option of every `curate train-classifier` kind, and every
kind (a flag only `--help` told of was a flag a newcomer could not find)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.cli import build_parser

DOC = Path(__file__).resolve().parents[1] / "docs" / "train_classifier.md"


def test_every_kind_and_option_is_in_the_doc():
    parser = build_parser("train-classifier")
    command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["train-classifier"]
    kinds = next(a for a in command._actions if isinstance(a, argparse._SubParsersAction)).choices
    text = DOC.read_text()
    assert len(kinds) == 5
    for kind, sub in kinds.items():
        section = text.split(f"## `{kind}`\n", 1)[1].split("\n## ", 1)[0]
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert f"`{action.option_strings[-1]}" in section, f"{kind}: {action.option_strings[-1]} is not in docs/train_classifier.md"
