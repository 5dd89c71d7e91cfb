"""Files the structural score once misjudged by kind: a file cut at ``score_max_chars`` is the start of a file,
not a broken one; a type stub is not asked for docstrings; a file with no line of code scores below code;
``extra.tiers`` holds languages only, so its entries add up to the run's tiers."""

import numpy as np

from classifiers.code_quality import NO_CODE_SCORE, StructuralScorer, components, structural_score
from classifiers.code_quality_features import structural_features
from classifiers.scorer import Batch
from curation.quality.code_files import score_frame
from pipelines.stages.code_quality import _on_batches
from pipelines.stages.code_web import block_score
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, read_parts, run_one


def _module(n: int) -> str:
    """A documented Python module of ``n`` functions, each a few statements long."""
    return '"""Geometry helpers."""\n\n' + "".join(
        f'def area_{i}(radius, scale=1.0):\n    """Area of circle {i}, scaled."""\n    if radius < 0:\n'
        f'        raise ValueError("negative radius")\n    value = 3.14159 * radius * radius\n    return value * scale\n\n\n'
        for i in range(n))


C_FILE = "".join(f"/* Adds {i}. */\nint add_{i}(int a)\n{{\n    if (a > {i}) {{\n        return a + {i};\n    }}\n    return a;\n}}\n\n"
                 for i in range(40))


def _score(texts, paths, langs, max_chars):
    df = docs_frame([{"doc_id": f"d{i}", "text": t, "path": p, "language": lang, "source": "code"}
                     for i, (t, p, lang) in enumerate(zip(texts, paths, langs, strict=True))])
    s = score_frame(df, {"structural": _on_batches(StructuralScorer())}, sources=("code",), max_chars=max_chars)
    return s["code_score_structural"].to_numpy()


def test_a_file_cut_at_score_max_chars_scores_as_the_whole_file_not_as_broken_code():
    py = _module(60)
    cut_at = len(py) // 3 + 7  # inside a function body: the prefix does not parse
    assert py[:cut_at].count('"""') % 2 == 0 and py[cut_at - 1] != "\n"
    whole, cut = (_score([py], ["pkg/geo.py"], ["Python"], n)[0] for n in (len(py), cut_at))
    broken = structural_score(structural_features(py[:cut_at], "Python", "pkg/geo.py"))  # the same prefix read as a whole file
    assert structural_features(py[:cut_at], "Python", "pkg/geo.py")["parse_error"] == 1
    assert abs(cut - whole) < 0.5 and cut - broken > 1.5
    f = structural_features(py[:cut_at], "Python", "pkg/geo.py", cut=True)
    assert f["parse_error"] == 0 and f["documented_fraction"] == 1.0  # read by its indentation, docstrings found
    # brace languages: a prefix leaves blocks open, which is no parse error; a bracket that closes nothing still is
    c_whole, c_cut = (_score([C_FILE], ["a.c"], ["C"], n)[0] for n in (len(C_FILE), len(C_FILE) // 2 + 20))
    assert structural_features(C_FILE[: len(C_FILE) // 2 + 20], "C", "a.c")["parse_error"] == 1
    assert abs(c_cut - c_whole) < 0.5
    stray = "int f(int a)\n{\n    return a;\n}\n}\n" + C_FILE
    assert structural_features(stray[:200], "C", "a.c", cut=True)["parse_error"] == 1


def test_type_stubs_get_the_documentation_floor_of_tests_and_examples():
    stub = "from typing import Any\n\nclass Token:\n    start_mark: Any\n    def __init__(self, start_mark: Any, end_mark: Any) -> None: ...\n" \
           "\nclass StreamStartToken(Token):\n    id: str\n    encoding: str | None\n    def __init__(self, encoding: str | None = ...) -> None: ...\n"
    as_stub, as_module = (structural_features(stub, "Python", p) for p in ("yaml/tokens.pyi", "yaml/tokens.py"))
    assert components(as_module)["documentation"] == 0.0 and components(as_stub)["documentation"] == 0.6
    s_stub, s_module = StructuralScorer().score(Batch([stub, stub], ["Python"] * 2, ["yaml/tokens.pyi", "yaml/tokens.py"]))
    assert s_stub - s_module > 1.0 and s_stub == structural_score(as_stub)  # no test discount for a stub


def test_a_file_with_no_line_of_code_scores_below_code():
    files = {
        "pkg/__init__.py": "# Copyright 2013 Example Inc.\n#\n# Licensed under the Apache License, Version 2.0.\n",
        "pkg/exceptions.py": '"""Exceptions raised by the signer service."""\n',
        "LICENSE.md": "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n",
        "LICENSE": "Apache License\nVersion 2.0, January 2004\n",
        "include/empty.h": "/*\n * There isn't anything here, but the file must not be empty.\n */\n",
        "lib/license.js": "// Reads the licence field.\nmodule.exports = (pkg) => pkg.license\n",
        "pkg/tiny.py": "x = 1\n",
    }
    langs = ["Python", "Python", "Markdown", None, "C", "JavaScript", "Python"]
    scores = dict(zip(files, StructuralScorer().score(Batch(list(files.values()), langs, list(files))), strict=True))
    no_code = ["pkg/__init__.py", "pkg/exceptions.py", "LICENSE.md", "LICENSE", "include/empty.h"]
    assert all(scores[p] == NO_CODE_SCORE for p in no_code)
    assert scores["lib/license.js"] > 5 and scores["pkg/tiny.py"] > 5  # code, whatever the file's name
    # a page's code block of comments keeps its structural score (a shell prompt "# apt install" reads as a comment)
    assert block_score("# apt install nginx\n", "Shell") > 5


def test_stage_tiers_files_without_code_low_and_extra_tiers_add_up(tmp_path):
    good = _module(3)
    rows = [{"doc_id": f"py{i}", "text": good.replace("area_", f"area{i}_"), "path": f"pkg/m{i}.py"} for i in range(9)]
    rows += [{"doc_id": "init", "text": "# This file makes the directory a package.\n", "path": "pkg/__init__.py"},
             {"doc_id": "long", "text": _module(60), "path": "pkg/long.py"}]
    for r in rows:
        r["source"], r["language"] = "code", "Python"
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    res = run_one("code_quality", inp, tmp_path / "out", ["code_quality.tier_min_files=5", "code_quality.score_max_chars=2000"])
    kept, _ledger = assert_conservation(inp, tmp_path / "out")
    tier = dict(zip(kept["doc_id"], kept["code_tier"], strict=True))
    assert tier["init"] == "low" and tier["long"] != "low"  # cut at 2,000 characters, mid-function
    extra = res.stats["extra"]["tiers"]
    assert "*" not in extra and set(extra) == {"Python"}
    for t in ("high", "medium", "low"):
        assert sum(v[t] for v in extra.values()) == (read_parts(tmp_path / "out" / "docs")["code_tier"] == t).sum()
    assert np.isclose(kept.set_index("doc_id").loc["init", "code_score_structural"], NO_CODE_SCORE)
