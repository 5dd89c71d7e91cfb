"""The examples in the product's docstrings run and print what they show (a docstring example that
rots misleads the reader who trusts it). Every module of curation/, pipelines/ and classifiers/."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for package in ("curation", "pipelines", "classifiers")
                 for p in (ROOT / package).rglob("*.py") if p.name != "__main__.py")


def test_every_package_has_modules() -> None:
    assert len(MODULES) > 100 and "curation.mixture.replay" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name.removesuffix(".__init__"))
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples fail (printed above)"
