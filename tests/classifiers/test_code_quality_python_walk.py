"""The Python statement walk of ``structural_features`` on every block kind (match, except*, try/finally…).

The expected figures were computed by the walk before it dispatched on node types (isinstance and
getattr on every statement) and are pinned here so the faster walk cannot drift.
"""

from __future__ import annotations

import sys

import pytest

from classifiers.code_quality_features import structural_features

SRC = '''"""Module doc."""
import os


# helper
@decorator
def f(x):
    """Doc
    two."""
    match x:
        case 1:
            if x:
                for i in range(3):
                    while True:
                        break
        case _:
            pass
    try:
        pass
    except* ValueError:
        with open(x) as fh:
            pass
    try:
        y = 1
    finally:
        async def g():
            async with a:
                async for b in c:
                    pass
    try:
        pass
    except OSError:
        class C:
            def m(self):
                return lambda: 1
    else:
        pass
    return x
'''


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* needs Python 3.11")
def test_walk_visits_every_block_kind() -> None:
    f = structural_features(SRC, "Python", "a.py")
    assert (f["n_functions"], f["max_nesting"], f["parse_error"]) == (4, 4, 0)  # f, g, C, m; match > if > for > while
    assert f["documented_fraction"] == 0.25  # f's docstring (the comment above its decorator does not count twice)
    assert f["mean_function_lines"] == 38 / 3 and f["max_function_lines"] == 32  # f (32 lines), g (4) and m (2) (classes are not functions)
    assert f["comment_fraction"] == 4 / 35


def test_walk_without_blocks_and_with_a_parse_error() -> None:
    f = structural_features("x = 1\n", "Python", "a.py")
    assert (f["n_functions"], f["max_nesting"], f["documented_fraction"], f["parse_error"]) == (0, 0, -1.0, 0)
    f = structural_features("def f(:\n  pass\n", "Python", "a.py")
    assert (f["n_functions"], f["max_nesting"], f["documented_fraction"], f["parse_error"]) == (0, 1, 0.0, 1)
