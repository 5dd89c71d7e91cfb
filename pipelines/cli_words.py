"""The words of a ``curate`` command line that argparse alone does not handle: a command that is
not one (with the nearest that is), and ``key=value`` recipe overrides anywhere on the line."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

_OVERRIDE = re.compile(r"^\+?[A-Za-z_][\w./*-]*=")
_LITERAL = re.compile(r"``(.+?)``", re.S)


def plain(text: str) -> str:
    """A docstring's words for ``--help``: reST literals (double backticks) as Markdown's single ones.

    >>> plain("``curate report RUN_DIR``: a report")
    '`curate report RUN_DIR`: a report'
    """
    return _LITERAL.sub(r"`\1`", text)


def curate_version() -> str:
    """The installed package's version (importlib.metadata), or "unknown" when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("curation")
    except PackageNotFoundError:
        return "unknown (not installed)"


def suggest_command(parser: argparse.ArgumentParser, command: str | None) -> None:
    """A command that is not one, with the nearest that is (``minhash_dedup``, the recipe's
    spelling, for ``minhash-dedup``): argparse lists every choice and suggests none."""
    from curation.errors import nearest

    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    if command and commands and command not in commands and (near := nearest(command.replace("_", "-"), commands)):
        dashes = " (stages are commands with dashes)" if "_" in command else ""
        parser.error(f"unknown command {command!r}; did you mean {near!r}?{dashes}; see: curate {near} --help")


def split_overrides(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> None:
    """``key=value`` words anywhere on the line are overrides (also after ``--input a b``)."""
    bad = [e for e in extra if not _OVERRIDE.match(e)]
    if bad or (extra and not hasattr(args, "overrides")):
        hint = " (a recipe override is key=value, e.g. minhash_dedup.threshold=0.8)" if hasattr(args, "overrides") else ""
        parser.error(f"unrecognized arguments: {' '.join(bad or extra)}{hint}")
    if hasattr(args, "overrides"):
        inputs = getattr(args, "input", None) or []
        moved = [i for i in inputs if _OVERRIDE.match(i) and not Path(i).exists()]
        args.input = [i for i in inputs if i not in moved]
        if not args.input:
            parser.error("--input needs at least one path")
        args.overrides = [*moved, *extra]
