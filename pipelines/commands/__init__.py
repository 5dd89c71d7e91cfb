"""Subcommands beyond the stages (report, verify, manifest, trainers), one module each with
``add_arguments(parser)`` and ``main(args)``."""

from __future__ import annotations

import argparse
import importlib


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
        p = sub.add_parser(name, help=(mod.__doc__ or name).strip().splitlines()[0])
        mod.add_arguments(p)
        p.set_defaults(**{dest: mod.main})
