import numpy as np

from classifiers.code_content import CodeContentClassifier, fit_code_content, training_windows, windows

CODE = "\n".join(f"def handler_{i}(request):\n    value = request.get('k{i}')\n    return value * {i}" for i in range(10))
PROSE = "\n".join(f"The committee met on day {i} and agreed that the harvest festival would open the season." for i in range(30))


def test_windows_cover_the_text_and_are_bounded():
    text = "\n".join(f"line {i}" for i in range(100))
    ws = windows(text, window_lines=10)
    assert len(ws) == 10 and ws[0].startswith("line 0") and ws[-1].endswith("line 99")
    assert len(windows(text, window_lines=1, max_windows=7)) == 7
    assert windows("") == []


def test_trained_model_separates_code_from_prose(tmp_path):
    texts, labels = training_windows([CODE] * 5, [PROSE] * 5, window_lines=6)
    assert set(labels.tolist()) == {0.0, 1.0}
    model = fit_code_content(texts, labels, n_features=2**14, epochs=5)
    model.save(tmp_path / "m", window_lines=6, model_version="t")
    clf = CodeContentClassifier(tmp_path / "m")
    page = PROSE + "\n" + CODE[:200]  # an article with one snippet
    p = clf.predict([CODE, PROSE, page, ""])
    assert p[0] > 0.5 > p[1] and p[2] > 0.5 and p[3] == 0.0
    assert clf.version.startswith("code_content:t:")


def test_shipped_default_model_recognises_code():
    clf = CodeContentClassifier()
    snippet = "import os\n\nfor name in os.listdir('.'):\n    if name.endswith('.py'):\n        print(name)\n"
    prose = "We walked along the river in the morning and talked about the book we had both read last summer."
    p = clf.predict([snippet, prose])
    assert p[0] > 0.5 > p[1]
    assert np.all((p >= 0) & (p <= 1))
