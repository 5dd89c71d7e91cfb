"""A stage given a model trained for another kind of scoring refuses it before anything runs (exit 2,
naming the setting, what the model is, what the setting needs and how to train one); a damaged model
is exit 4 naming the file; training on labels that cannot teach anything is refused.

A code-quality model given to edu_score made every web page edu-rich, an edu model given to
web_quality's linear scorer or to code_quality's learned scorer was used without a word, and a cut
weights file or a garbled model card ended in an internal error (exit 70)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipelines.cli import main as curate
from tests.helpers import docs_frame, make_stage_dir, read_parts

REPO = Path(__file__).resolve().parents[2]
GOOD = [
    "The museum opened a new wing dedicated to the history of printing in the region.",
    "Scientists observed that the birds returned earlier each spring as the climate warmed.",
    "The derivative of a function measures how its value changes as its input changes; we prove the chain rule.",
    "Students learned to measure the speed of sound with two microphones and a stopwatch.",
]
BAD = ["login | register | cart", "BUY NOW cheap deals click", "home about contact sitemap", "cookie settings accept all"]
CODE = [f"def handler_{i}(request):\n    value = request.get('k{i}')\n    if value:\n        return value * {i}\n    return None\n" * 3
        for i in range(24)]


def _train(*argv: str) -> None:
    assert curate(["train-classifier", *argv]) == 0


@pytest.fixture(scope="module")
def m(tmp_path_factory) -> dict[str, Path]:
    """Small models of every kind, trained with the train-classifier commands, and a stage input."""
    d = tmp_path_factory.mktemp("models")
    texts = [f"{t} ({i})" for i in range(6) for t in GOOD + BAD]
    web = [{"doc_id": f"w{i}", "text": t, "source": "web"} for i, t in enumerate(texts)]
    code = [{"doc_id": f"c{i}", "text": t, "source": "code", "path": f"m{i}.py", "language": "Python", "repo": f"r{i % 4}"}
            for i, t in enumerate(CODE)]
    out = {"input": make_stage_dir(d / "in", docs_frame(web + code))}
    pd.DataFrame(web + code).to_parquet(d / "docs.parquet")
    pd.DataFrame({"text": [t for t in texts if t.split(" (")[0] in GOOD]}).to_json(d / "pos.jsonl", orient="records", lines=True)
    pd.DataFrame({"text": [t for t in texts if t.split(" (")[0] in BAD]}).to_json(d / "neg.jsonl", orient="records", lines=True)
    small = ["--n-features", "4096", "--epochs", "2"]
    _train("linear", "--positive", str(d / "pos.jsonl"), "--negative", str(d / "neg.jsonl"), "--output", str(d / "lin"), *small)
    pd.DataFrame({"text": texts, "score": [4.0 if t.split(" (")[0] in GOOD else 0.5 for t in texts]}).to_parquet(d / "edu.parquet")
    _train("edu", "--labels", str(d / "edu.parquet"), "--kind", "hashed", "--output", str(d / "edu"))
    (d / "cq.jsonl").write_text("".join(json.dumps({"doc_id": f"c{i}", "score": 2.0 + i % 5}) + "\n" for i in range(24)))
    _train("code-quality", "--input", str(d / "docs.parquet"), "--labels", str(d / "cq.jsonl"), "--output", str(d / "cq"), *small)
    _train("code-content", "--input", str(d / "docs.parquet"), "--output", str(d / "cc"), *small)
    pd.DataFrame({"doc_id": [r["doc_id"] for r in web], "score": [4.0 if t.split(" (")[0] in GOOD else 1.0 for t in texts]}).to_json(
        d / "ann.jsonl", orient="records", lines=True)
    _train("web-embedding", "--input", str(out["input"]), "--annotations", str(d / "ann.jsonl"), "--embedder-model", "minilm-static",
           "--output", str(d / "we"))
    shutil.copytree(REPO / "classifiers" / "models" / "edu_default" / "head", d / "edu_head")  # an edu embedding head
    return out | {name: d / name for name in ("lin", "edu", "cq", "cc", "we", "edu_head")}


def _stage(tmp_path: Path, m: dict[str, Path], command: str, *overrides: str) -> int:
    out = tmp_path / f"out-{command}"
    shutil.rmtree(out, ignore_errors=True)
    return curate([command, "--input", str(m["input"]), "--output", str(out), "--quiet", *overrides])


def _error(caplog) -> str:
    return next(r.getMessage() for r in caplog.records if r.levelname == "ERROR")


def _wq(name: str, kind: str | None, model: Path) -> list[str]:
    opts = f"{{kind: {kind}, model: {model}}}" if kind else f"{{model: {model}}}"
    return [f"scorers=[heuristics,{name}]", f"scorer_options={{{name}: {opts}}}"]


WRONG = [  # (command, overrides of model names, the setting, what the model is, what the setting needs, the command to train one)
    ("edu-score", lambda m: [f"scorer={m['cq']}"], "edu_score.scorer", "a code-quality model", "an edu scorer", "train-classifier edu"),
    ("edu-score", lambda m: [f"scorer={m['lin']}"], "edu_score.scorer", "a web-quality linear model", "an edu scorer", "train-classifier edu"),
    ("edu-score", lambda m: [f"scorer={m['we']}"], "edu_score.scorer", "a web-quality embedding head", "an edu scorer",
     "train-classifier edu"),
    ("edu-score", lambda m: [f"scorer={m['cc']}"], "edu_score.scorer", "a code-content model", "an edu scorer", "train-classifier edu"),
    ("code-quality", lambda m: ["scorers=[structural,learned]", f"learned_model={m['edu']}"], "code_quality.learned_model",
     "an edu scorer", "a code-quality model", "train-classifier code-quality"),
    ("code-web", lambda m: [f"classifier_model={m['lin']}"], "code_web.classifier_model", "a web-quality linear model",
     "a code-content model", "train-classifier code-content"),
    ("web-quality", lambda m: _wq("linear", None, m["edu"]), "web_quality.scorer_options.linear.model", "an edu scorer",
     "a web-quality linear model", "train-classifier linear"),
    ("web-quality", lambda m: _wq("lin2", "linear", m["cq"]), "web_quality.scorer_options.lin2.model", "a code-quality model",
     "a web-quality linear model", "train-classifier linear"),
    ("web-quality", lambda m: _wq("emb", "embedding", m["edu_head"]), "web_quality.scorer_options.emb.model", "an edu scorer",
     "a web-quality embedding head", "train-classifier web-embedding"),
]


@pytest.mark.parametrize(("command", "overrides", "key", "what", "need", "train"), WRONG,
                         ids=[f"{c}-{i}" for i, (c, *_) in enumerate(WRONG)])
def test_a_model_trained_for_another_kind_is_refused(tmp_path, m, caplog, command, overrides, key, what, need, train):
    assert _stage(tmp_path, m, command, *overrides(m)) == 2
    message = _error(caplog)
    assert message.startswith(f"{key} = "), message
    model, needs = message.split("; this setting needs ")
    assert what in model and need in needs and f"; train one with `curate {train}`" in needs, message
    assert not (tmp_path / f"out-{command}" / "_SUCCESS").exists()


@pytest.mark.parametrize(("command", "overrides", "column"), [
    ("edu-score", lambda m: [f"scorer={m['edu']}"], "edu_score"),
    ("code-quality", lambda m: ["scorers=[structural,learned]", f"learned_model={m['cq']}"], "code_score_learned"),
    ("web-quality", lambda m: _wq("linear", None, m["lin"]), "quality_score_linear"),
    ("web-quality", lambda m: _wq("emb", "embedding", m["we"]), "quality_score_emb"),
], ids=["edu", "code-quality", "web-linear", "web-embedding"])
def test_the_right_model_still_runs(tmp_path, m, command, overrides, column):
    assert _stage(tmp_path, m, command, *overrides(m)) == 0
    scored = read_parts(tmp_path / f"out-{command}" / "docs")
    assert scored[column].notna().any()


@pytest.mark.parametrize("damage", ["garbled card", "cut weights"])
@pytest.mark.parametrize(("command", "setting"), [
    ("edu-score", lambda p: [f"scorer={p}"]),
    ("web-quality", lambda p: _wq("linear", None, p)),
], ids=["edu-score", "web-quality-linear"])
def test_a_damaged_model_is_exit_4_naming_the_file(tmp_path, m, caplog, damage, command, setting):
    model = tmp_path / "model"
    shutil.copytree(m["edu" if command == "edu-score" else "lin"], model)
    broken = model / ("model.json" if damage == "garbled card" else "weights.npz")
    if damage == "garbled card":
        broken.write_text('{"kind": "hashed_linear", ')
    else:
        broken.write_bytes(broken.read_bytes()[:1000])
    assert _stage(tmp_path, m, command, *setting(model)) == 4
    message = _error(caplog)
    assert message.startswith(str(broken)) and "train the model again" in message and "internal error" not in caplog.text


def test_a_cut_weights_file_read_by_a_worker_is_a_damaged_file(tmp_path, m):
    from classifiers.edu import get_edu_scorer
    from classifiers.scorer import Batch
    from curation.errors import DamagedFileError

    model = tmp_path / "model"
    shutil.copytree(m["edu"], model)
    (model / "weights.npz").write_bytes((model / "weights.npz").read_bytes()[:1000])
    with pytest.raises(DamagedFileError, match="weights.npz cannot be read"):
        get_edu_scorer(model).score(Batch(["a page"]))


def test_labels_with_one_value_are_refused(tmp_path, caplog):
    path = tmp_path / "oneclass.parquet"
    pd.DataFrame({"text": [f"{t} ({i})" for i in range(5) for t in GOOD + BAD], "score": 1.0}).to_parquet(path)
    assert curate(["train-classifier", "edu", "--labels", str(path), "--kind", "hashed", "--output", str(tmp_path / "m")]) == 2
    message = _error(caplog)
    assert message.startswith(str(path)) and "every one of its 40 scores is 1" in message
    assert not (tmp_path / "m").exists()


def test_a_missing_or_empty_training_file_is_named(tmp_path, caplog):
    missing = tmp_path / "nonexistent.parquet"
    assert curate(["train-classifier", "edu", "--labels", str(missing), "--kind", "hashed", "--output", str(tmp_path / "m")]) == 4
    assert _error(caplog) == f"{missing} does not exist; give a Parquet or JSON-lines file with text and score columns"
    caplog.clear()
    empty, neg = tmp_path / "empty.parquet", tmp_path / "neg.jsonl"
    pd.DataFrame({"text": pd.Series([], dtype=str)}).to_parquet(empty)
    pd.DataFrame({"text": BAD * 3}).to_json(neg, orient="records", lines=True)
    assert curate(["train-classifier", "linear", "--positive", str(empty), "--negative", str(neg), "--output", str(tmp_path / "l")]) == 4
    assert _error(caplog) == f"binary training needs documents of both classes; --positive {empty} gave no document with text"
