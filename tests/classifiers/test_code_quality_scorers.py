import numpy as np
import pytest

from classifiers.code_quality import TEST_DISCOUNT, LearnedScorer, StructuralScorer, get_scorer, structural_score
from classifiers.code_quality_features import structural_features
from classifiers.code_quality_scan import scan
from classifiers.scorer import Batch, model_fingerprint

GOOD = {
    "Python": ('"""Stats."""\n\n\ndef mean(values):\n    """Arithmetic mean."""\n    total = sum(values)\n'
               '    return total / len(values)\n\n\ndef spread(values):\n    # max minus min\n'
               '    return max(values) - min(values)\n', "stats.py"),
    "JavaScript": ("// Sum of a list.\nfunction sumAll(items) {\n  let total = 0;\n  for (const item of items) {\n"
                   "    total += item;\n  }\n  return total;\n}\n\n// Largest item.\nfunction largest(items) {\n"
                   "  return Math.max(...items);\n}\n", "sum.js"),
    "Go": ("package stats\n\n// Mean returns the average.\nfunc Mean(xs []float64) float64 {\n\tvar total float64\n"
           "\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total / float64(len(xs))\n}\n", "stats.go"),
    "Rust": ("/// Average of the values.\npub fn mean(values: &[f64]) -> f64 {\n    let total: f64 = values.iter().sum();\n"
             "    total / values.len() as f64\n}\n\n/// Spread of the values.\npub fn spread(values: &[f64]) -> f64 {\n"
             "    let max = values.iter().cloned().fold(f64::MIN, f64::max);\n    max\n}\n", "lib.rs"),
    "C": ("/* Average of n values. */\ndouble mean(const double *values, int n) {\n    double total = 0;\n"
          "    for (int i = 0; i < n; i++) {\n        total += values[i];\n    }\n    return total / n;\n}\n", "mean.c"),
    "Java": ("/** Statistics helpers. */\npublic class Stats {\n    /** Average of the values. */\n"
             "    public static double mean(double[] values) {\n        double total = 0;\n"
             "        for (double v : values) {\n            total += v;\n        }\n        return total / values.length;\n"
             "    }\n}\n", "Stats.java"),
    "Shell": ("#!/bin/sh\n# Back up a folder to a tarball.\nset -e\n\nbackup_dir() {\n    src=\"$1\"\n"
              "    tar czf \"$src.tar.gz\" \"$src\"\n}\n\n# main\nbackup_dir \"$HOME/docs\"\n", "backup.sh"),
}


def _bad(lang: str) -> str:
    """Deeply nested, uncommented, duplicated, unbalanced code of the same family."""
    if lang == "Python":
        body = "def F(a):\n" + "".join("    " * (i + 1) + f"if a > {i}:\n" for i in range(9)) + "    " * 10 + "return a\n"
        return body + "x = F(1)\n" * 20 + "def broken(:\n"
    if lang == "Shell":
        return "".join("if [ -f x ]; then\n" * 3) + "cp a b\n" * 30
    opener = {"Go": "func F(a int) int {\n", "Rust": "fn F(a: i32) -> i32 {\n", "JavaScript": "function F(a) {\n",
              "C": "int F(int a) {\n", "Java": "class A {\nint F(int a) {\n"}[lang]
    return opener + "if (a) {\n" * 9 + "a = a + 1;\n" * 30 + "}\n" * 4


@pytest.mark.parametrize("lang", sorted(GOOD))
def test_good_code_scores_above_bad_code_per_language(lang):
    text, path = GOOD[lang]
    s = StructuralScorer()
    good, bad = s.score(Batch([text, _bad(lang)], [lang, lang], [path, path]))
    assert 0.0 <= bad < good <= 10.0


def test_python_parse_error_and_nesting_from_ast():
    f = structural_features("def f(:\n    pass\n", "Python", "x.py")
    assert f["parse_error"] == 1
    nested = "def f(a):\n    for x in a:\n        if x:\n            while x:\n                x -= 1\n"
    assert structural_features(nested, "Python", "x.py")["max_nesting"] == 3


def test_brace_scan_masks_strings_and_comments():
    s = scan('fn main() { let s = "}}}"; // }\n /* { */ }\n', "rust")
    assert s.balanced and s.max_depth == 1
    assert not scan("int f() { if (x) { }\n", "c").balanced
    assert structural_features("int f() { if (x) { }\n", "C", "a.c")["parse_error"] == 1


def test_function_lengths_and_names_in_brace_languages():
    go = GOOD["Go"][0]
    f = structural_features(go, "Go", "stats.go")
    assert f["n_functions"] == 1 and f["mean_function_lines"] == 7 and f["documented_fraction"] == 1.0
    js = structural_features(GOOD["JavaScript"][0], "JavaScript", "sum.js")
    assert js["n_functions"] == 2 and js["naming_fraction"] == 1.0


def test_test_files_are_discounted():
    text, _ = GOOD["Python"]
    f = structural_features(text, "Python", "pkg/stats.py")
    t = structural_features(text, "Python", "tests/test_stats.py")
    assert t["is_test_or_example"] and structural_score(t) == pytest.approx(TEST_DISCOUNT * structural_score(f))
    # an undocumented test is not punished for it: its test names document it
    bare = "def test_adds():\n    assert 1 + 1 == 2\n"
    assert structural_score(structural_features(bare, "Python", "tests/test_x.py")) > structural_score(
        structural_features(bare, "Python", "pkg/x.py")) * TEST_DISCOUNT


def test_learned_scorer_from_a_model_folder(tmp_path):
    from classifiers.code_quality import learned_input
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    texts = [learned_input("def documented():\n    'Doc.'\n    return 1\n", "Python"),
             learned_input("x=1;y=2;z=3;w=4\n", "Python")] * 20
    fit_linear(HashedLinearModel(n_features=2**12, task="regression"), texts, [8.0, 2.0] * 20, epochs=30, lr=0.5).save(
        tmp_path / "m", model_version="t", rubric="code_quality", rubric_version="1")
    scorer = get_scorer("learned", str(tmp_path / "m"))
    assert isinstance(scorer, LearnedScorer) and scorer.available()
    assert scorer.version == f"learned:t:code_quality@1+{model_fingerprint(tmp_path / 'm')}"
    out = scorer.score(Batch(["def documented():\n    'Doc.'\n    return 1\n", "x=1;y=2;z=3;w=4\n"], ["Python"] * 2, [None, None]))
    assert out[0] > out[1] and np.all((out >= 0) & (out <= 10))
    with pytest.raises(ValueError):
        get_scorer("magic")
