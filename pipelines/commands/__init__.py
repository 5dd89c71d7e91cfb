"""Subcommands beyond the stages (report, verify, manifest, trainers), one module each with
``add_arguments(parser)`` and ``main(args)``."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from pipelines.cli_words import plain


def add_module_parsers(sub: argparse._SubParsersAction, modules: dict[str, str], dest: str) -> None:
    """One subparser per ``name → module``, described by the module's first docstring line, with the
    module's ``main`` as the ``dest`` default; a module whose optional dependencies are missing is
    left out (its own import error is re-raised)."""
    for name, module in modules.items():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        p = sub.add_parser(name, help=plain((mod.__doc__ or name).strip().splitlines()[0]))
        mod.add_arguments(p)
        p.set_defaults(**{dest: mod.main})


def share(text: str) -> float:
    """An argparse type: a share from 0 to below 1 (a held-out part: 1 would leave nothing to train on)."""
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"{text}: give a share from 0 to below 1 (1 would leave nothing to train on)")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number ≥ 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give a whole number of at least 1")
    return value


def non_negative(text: str) -> float:
    """An argparse type: a number ≥ 0 (a penalty, a rate)."""
    value = float(text)
    if not value >= 0.0:
        raise argparse.ArgumentTypeError(f"{text}: give a number ≥ 0")
    return value


def read_labels(path: Any, columns: tuple[str, ...] = ()) -> Any:
    """A JSONL or Parquet file of labels as a DataFrame with ``columns``; a file that is missing,
    cut or not JSON lines is an InputError (exit 4) naming it, not an internal error."""
    import pandas as pd

    from curation.ingest.inputs import InputError

    try:
        df = pd.read_parquet(path) if str(path).endswith(".parquet") else pd.read_json(path, lines=True)
    except FileNotFoundError:
        raise
    except (ValueError, OSError) as exc:
        raise InputError(f"{path} cannot be read as {'Parquet' if str(path).endswith('.parquet') else 'JSON lines'} "
                         f"({str(exc)[:200]}); give one JSON object a line with {', '.join(columns) or 'its columns'}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{path} has no column(s) {missing}; it has {list(df.columns)[:12]}")
    return df
