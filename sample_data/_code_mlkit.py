"""``acme-labs/mlkit``: small NumPy machine-learning models, with a vendored copy of pyinventory's
``retry.py``, a base64 weights blob, big YAML/JSON data files and copy-pasted experiment scripts."""

from __future__ import annotations

import base64
import json
import random

from _code_python import RETRY

METRICS = '''"""Classification and regression metrics on NumPy arrays."""

from __future__ import annotations

import numpy as np


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of exact matches."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError("y_true and y_pred must have the same shape")
    return float(np.mean(y_true == y_pred)) if y_true.size else 0.0


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    """``m[i, j]`` counts samples of true class i predicted as j."""
    m = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(m, (np.asarray(y_true), np.asarray(y_pred)), 1)
    return m


def precision_recall_f1(y_true: np.ndarray, y_pred: np.ndarray, positive: int = 1) -> tuple[float, float, float]:
    """Binary precision, recall and F1 for the ``positive`` label."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    tp = np.sum((y_pred == positive) & (y_true == positive))
    fp = np.sum((y_pred == positive) & (y_true != positive))
    fn = np.sum((y_pred != positive) & (y_true == positive))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return float(precision), float(recall), float(f1)


def mean_squared_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    diff = np.asarray(y_true, dtype=float) - np.asarray(y_pred, dtype=float)
    return float(np.mean(diff**2))


def r2_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Coefficient of determination; 1.0 is a perfect fit."""
    y_true = np.asarray(y_true, dtype=float)
    ss_res = np.sum((y_true - np.asarray(y_pred, dtype=float)) ** 2)
    ss_tot = np.sum((y_true - y_true.mean()) ** 2)
    return float(1.0 - ss_res / ss_tot) if ss_tot else 0.0
'''

FEATURES = '''"""Feature preprocessing: scaling, one-hot encoding and splitting."""

from __future__ import annotations

import numpy as np


class StandardScaler:
    """Scale columns to zero mean and unit variance (constant columns are left at zero)."""

    def fit(self, x: np.ndarray) -> "StandardScaler":
        x = np.asarray(x, dtype=float)
        self.mean_ = x.mean(axis=0)
        std = x.std(axis=0)
        self.scale_ = np.where(std == 0, 1.0, std)
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=float) - self.mean_) / self.scale_

    def fit_transform(self, x: np.ndarray) -> np.ndarray:
        return self.fit(x).transform(x)


def one_hot(labels: np.ndarray, n_classes: int | None = None) -> np.ndarray:
    """Integer labels to a one-hot matrix."""
    labels = np.asarray(labels, dtype=int)
    n = int(labels.max()) + 1 if n_classes is None else n_classes
    out = np.zeros((labels.size, n))
    out[np.arange(labels.size), labels] = 1.0
    return out


def train_test_split(x: np.ndarray, y: np.ndarray, test_size: float = 0.25, seed: int = 0):
    """Shuffle with a fixed seed and split into train and test parts."""
    if not 0 < test_size < 1:
        raise ValueError("test_size must be between 0 and 1")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    cut = int(round(len(x) * (1 - test_size)))
    train, test = order[:cut], order[cut:]
    return x[train], x[test], y[train], y[test]
'''

DATASETS = '''"""Loading datasets from local files or an HTTP mirror."""

from __future__ import annotations

import csv
import json
import urllib.request
from pathlib import Path

import numpy as np

from ._vendor.retry import retry


def load_csv(path: str | Path, target: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Numeric CSV with a header; returns (features, target, feature names)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path} has no rows")
    names = [c for c in rows[0] if c != target]
    x = np.array([[float(r[c]) for c in names] for r in rows])
    y = np.array([float(r[target]) for r in rows])
    return x, y, names


def load_json_samples(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``{"samples": [{"x": [...], "label": k}, ...]}`` -> arrays."""
    data = json.loads(Path(path).read_text())
    x = np.array([s["x"] for s in data["samples"]], dtype=float)
    y = np.array([s["label"] for s in data["samples"]], dtype=int)
    return x, y


@retry(attempts=4, base_delay=1.0)
def download(url: str, dest: str | Path) -> Path:
    """Download once; later calls reuse the file."""
    dest = Path(dest)
    if not dest.exists():
        with urllib.request.urlopen(url, timeout=30) as resp:
            dest.write_bytes(resp.read())
    return dest
'''

MODELS = {
    "linear": '''"""Linear and logistic regression fitted with NumPy."""

from __future__ import annotations

import numpy as np


class LinearRegression:
    """Ordinary least squares with an intercept, solved with ``lstsq``."""

    def fit(self, x: np.ndarray, y: np.ndarray) -> "LinearRegression":
        design = np.column_stack([np.ones(len(x)), x])
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        self.intercept_, self.coef_ = coef[0], coef[1:]
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.intercept_ + np.asarray(x) @ self.coef_


class LogisticRegression:
    """Binary logistic regression trained by batch gradient descent."""

    def __init__(self, lr: float = 0.1, epochs: int = 500, l2: float = 0.0) -> None:
        self.lr, self.epochs, self.l2 = lr, epochs, l2

    @staticmethod
    def _sigmoid(z: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def fit(self, x: np.ndarray, y: np.ndarray) -> "LogisticRegression":
        n, d = x.shape
        self.w_, self.b_ = np.zeros(d), 0.0
        for _ in range(self.epochs):
            p = self._sigmoid(x @ self.w_ + self.b_)
            grad_w = x.T @ (p - y) / n + self.l2 * self.w_
            grad_b = float(np.mean(p - y))
            self.w_ -= self.lr * grad_w
            self.b_ -= self.lr * grad_b
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return self._sigmoid(np.asarray(x) @ self.w_ + self.b_)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return (self.predict_proba(x) >= 0.5).astype(int)
''',
    "knn": '''"""k-nearest-neighbour classifier (brute force, Euclidean)."""

from __future__ import annotations

import numpy as np


class KNeighborsClassifier:
    def __init__(self, k: int = 5) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.k = k

    def fit(self, x: np.ndarray, y: np.ndarray) -> "KNeighborsClassifier":
        self.x_, self.y_ = np.asarray(x, dtype=float), np.asarray(y)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        # squared distances via (a - b)^2 = a^2 - 2ab + b^2, without a Python loop
        d2 = (x**2).sum(1)[:, None] - 2 * x @ self.x_.T + (self.x_**2).sum(1)[None, :]
        nearest = np.argsort(d2, axis=1)[:, : self.k]
        votes = self.y_[nearest]
        return np.array([np.bincount(row).argmax() for row in votes])
''',
    "kmeans": '''"""k-means clustering with k-means++ initialisation."""

from __future__ import annotations

import numpy as np


def kmeans_plus_plus(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Pick initial centres far apart from each other."""
    centres = [x[rng.integers(len(x))]]
    for _ in range(1, k):
        d2 = np.min([((x - c) ** 2).sum(1) for c in centres], axis=0)
        centres.append(x[rng.choice(len(x), p=d2 / d2.sum())])
    return np.array(centres)


class KMeans:
    def __init__(self, k: int, max_iter: int = 100, tol: float = 1e-6, seed: int = 0) -> None:
        self.k, self.max_iter, self.tol, self.seed = k, max_iter, tol, seed

    def fit(self, x: np.ndarray) -> "KMeans":
        rng = np.random.default_rng(self.seed)
        centres = kmeans_plus_plus(x, self.k, rng)
        for _ in range(self.max_iter):
            labels = self._assign(x, centres)
            new = np.array([x[labels == j].mean(0) if np.any(labels == j) else centres[j] for j in range(self.k)])
            shift = np.abs(new - centres).max()
            centres = new
            if shift < self.tol:
                break
        self.centres_, self.labels_ = centres, self._assign(x, centres)
        return self

    @staticmethod
    def _assign(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
        return np.argmin(((x[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
''',
    "naive_bayes": '''"""Gaussian naive Bayes."""

from __future__ import annotations

import numpy as np


class GaussianNB:
    def __init__(self, var_smoothing: float = 1e-9) -> None:
        self.var_smoothing = var_smoothing

    def fit(self, x: np.ndarray, y: np.ndarray) -> "GaussianNB":
        self.classes_ = np.unique(y)
        self.mean_ = np.array([x[y == c].mean(0) for c in self.classes_])
        self.var_ = np.array([x[y == c].var(0) for c in self.classes_]) + self.var_smoothing * x.var(0).max()
        self.log_prior_ = np.log(np.array([np.mean(y == c) for c in self.classes_]))
        return self

    def _joint_log_likelihood(self, x: np.ndarray) -> np.ndarray:
        ll = -0.5 * (np.log(2 * np.pi * self.var_)[None] + (x[:, None, :] - self.mean_[None]) ** 2 / self.var_[None])
        return ll.sum(-1) + self.log_prior_

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.classes_[np.argmax(self._joint_log_likelihood(np.asarray(x, dtype=float)), axis=1)]
''',
    "tree": '''"""A depth-limited decision tree classifier using Gini impurity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Node:
    feature: int = -1
    threshold: float = 0.0
    left: "Node | None" = None
    right: "Node | None" = None
    label: int = 0


def gini(y: np.ndarray) -> float:
    if y.size == 0:
        return 0.0
    p = np.bincount(y) / y.size
    return float(1.0 - np.sum(p**2))


def best_split(x: np.ndarray, y: np.ndarray) -> tuple[int, float, float]:
    """(feature, threshold, weighted impurity) of the best axis-aligned split."""
    best = (-1, 0.0, gini(y))
    for j in range(x.shape[1]):
        for t in np.unique(x[:, j])[:-1]:
            left = x[:, j] <= t
            score = (left.sum() * gini(y[left]) + (~left).sum() * gini(y[~left])) / y.size
            if score < best[2]:
                best = (j, float(t), score)
    return best


class DecisionTreeClassifier:
    def __init__(self, max_depth: int = 3, min_samples: int = 2) -> None:
        self.max_depth, self.min_samples = max_depth, min_samples

    def fit(self, x: np.ndarray, y: np.ndarray) -> "DecisionTreeClassifier":
        self.root_ = self._grow(np.asarray(x, dtype=float), np.asarray(y, dtype=int), 0)
        return self

    def _grow(self, x: np.ndarray, y: np.ndarray, depth: int) -> Node:
        node = Node(label=int(np.bincount(y).argmax()))
        if depth >= self.max_depth or y.size < self.min_samples or gini(y) == 0.0:
            return node
        feature, threshold, _ = best_split(x, y)
        if feature < 0:
            return node
        mask = x[:, feature] <= threshold
        node.feature, node.threshold = feature, threshold
        node.left = self._grow(x[mask], y[mask], depth + 1)
        node.right = self._grow(x[~mask], y[~mask], depth + 1)
        return node

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.array([self._predict_one(row) for row in np.asarray(x, dtype=float)])

    def _predict_one(self, row: np.ndarray) -> int:
        node = self.root_
        while node.left is not None and node.right is not None:
            node = node.left if row[node.feature] <= node.threshold else node.right
        return node.label
''',
}

TESTS = {
    "metrics": "from mlkit.metrics import accuracy, confusion_matrix, precision_recall_f1, r2_score\n\n\n"
               "def test_accuracy():\n    assert accuracy([1, 0, 1, 1], [1, 0, 0, 1]) == 0.75\n\n\n"
               "def test_confusion_matrix_counts():\n    m = confusion_matrix([0, 1, 1], [0, 1, 0], 2)\n    assert m.tolist() == [[1, 0], [1, 1]]\n\n\n"
               "def test_f1_perfect():\n    assert precision_recall_f1([1, 0, 1], [1, 0, 1]) == (1.0, 1.0, 1.0)\n\n\n"
               "def test_r2_perfect_fit():\n    assert r2_score([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0\n",
    "features": "import numpy as np\n\nfrom mlkit.features import StandardScaler, one_hot, train_test_split\n\n\n"
                "def test_scaler_zero_mean():\n    x = np.array([[1.0, 5.0], [3.0, 5.0]])\n    z = StandardScaler().fit_transform(x)\n"
                "    assert np.allclose(z.mean(0), 0.0)\n\n\ndef test_one_hot():\n    assert one_hot(np.array([0, 2])).tolist() == [[1, 0, 0], [0, 0, 1]]\n\n\n"
                "def test_split_sizes():\n    x, y = np.arange(20).reshape(10, 2), np.arange(10)\n    xa, xb, ya, yb = train_test_split(x, y, 0.3)\n"
                "    assert len(xa) == 7 and len(xb) == 3\n",
}
for _name, _cls_name in [("linear", "LinearRegression"), ("knn", "KNeighborsClassifier"), ("kmeans", "KMeans"),
                         ("naive_bayes", "GaussianNB"), ("tree", "DecisionTreeClassifier")]:
    _fit = "fit(x)" if _name == "kmeans" else "fit(x, y)"
    _ctor = f"{_cls_name}(k=2)" if _name in ("kmeans", "knn") else f"{_cls_name}()"
    _check = ("assert sorted(set(model.labels_.tolist())) == [0, 1]" if _name == "kmeans"
              else "assert np.allclose(model.predict(x), y, atol=1e-6)" if _name == "linear"
              else "assert (model.predict(x) == y).mean() > 0.9")
    TESTS[_name] = (f"import numpy as np\n\nfrom mlkit.models.{_name} import {_cls_name}\n\n\n"
                    f"def _two_blobs(seed=0):\n    rng = np.random.default_rng(seed)\n"
                    f"    x = np.vstack([rng.normal(0, 0.3, (30, 2)), rng.normal(3, 0.3, (30, 2))])\n"
                    f"    y = np.array([0] * 30 + [1] * 30)\n    return x, y\n\n\n"
                    f"def test_{_name}_separates_blobs():\n    x, y = _two_blobs()\n"
                    + ("    y = x @ np.array([2.0, -1.0]) + 0.5\n" if _name == "linear" else "")
                    + f"    model = {_ctor}.{_fit}\n    {_check}\n")


def experiment_script(i: int, rng: random.Random) -> str:
    """Copy-pasted notebook exports: no functions, magic numbers, one-letter names."""
    lr, ep, k = rng.choice([0.1, 0.05, 0.01]), rng.choice([100, 300, 1000]), rng.randint(2, 9)
    return f'''# exp {i:02d}
import numpy as np
import json
d=json.load(open("data/samples.json"))
X=np.array([s["x"] for s in d["samples"]])
y=np.array([s["label"] for s in d["samples"]])
m=X.mean(0)
s=X.std(0)
X=(X-m)/s
n=len(X)
t=int(n*0.8)
a=X[:t]
b=X[t:]
c=y[:t]
e=y[t:]
w=np.zeros(X.shape[1])
z=0
for i in range({ep}):
    p=1/(1+np.exp(-(a@w+z)))
    g=a.T@(p-c)/len(a)
    h=np.mean(p-c)
    w=w-{lr}*g
    z=z-{lr}*h
p=1/(1+np.exp(-(b@w+z)))
q=(p>0.5).astype(int)
print("acc",np.mean(q==e))
tp=0
fp=0
fn=0
for i in range(len(q)):
    if q[i]==1:
        if e[i]==1:
            tp=tp+1
        else:
            fp=fp+1
    else:
        if e[i]==1:
            fn=fn+1
print("p",tp/(tp+fp+1e-9),"r",tp/(tp+fn+1e-9))
# try k={k}
r=[]
for i in range(len(b)):
    dd=((a-b[i])**2).sum(1)
    o=np.argsort(dd)[:{k}]
    r.append(np.bincount(c[o]).argmax())
print("knn",np.mean(np.array(r)==e))
'''


def experiment_yaml(rng: random.Random, runs: int) -> str:
    lines = ["# Hyper-parameter sweep, one entry per run", "defaults:", "  seed: 0", "  test_size: 0.25",
             "  metrics: [accuracy, f1]", "runs:"]
    for i in range(runs):
        model = rng.choice(["logistic", "knn", "tree", "naive_bayes"])
        lines += [f"  - name: run-{i:04d}", f"    model: {model}", "    params:"]
        if model == "logistic":
            lines += [f"      lr: {rng.choice([0.3, 0.1, 0.03, 0.01])}", f"      epochs: {rng.choice([200, 500, 1000])}",
                      f"      l2: {rng.choice([0.0, 0.001, 0.01])}"]
        elif model == "knn":
            lines += [f"      k: {rng.randint(1, 15)}"]
        elif model == "tree":
            lines += [f"      max_depth: {rng.randint(2, 8)}", f"      min_samples: {rng.randint(2, 10)}"]
        else:
            lines += [f"      var_smoothing: 1.0e-{rng.randint(6, 10)}"]
        lines += [f"    features: [{', '.join(f'f{j}' for j in sorted(rng.sample(range(12), rng.randint(3, 8))))}]",
                  f"    tags: [{rng.choice(['baseline', 'ablation', 'sweep'])}, {rng.choice(['cpu', 'small', 'v2'])}]"]
    return "\n".join(lines) + "\n"


def samples_json(rng: random.Random, n: int) -> str:
    samples = []
    for i in range(n):
        label = i % 2
        samples.append({"id": i, "x": [round(rng.gauss(label * 1.5, 1.0), 4) for _ in range(6)], "label": label})
    return json.dumps({"version": 3, "n_features": 6, "samples": samples}, indent=1) + "\n"


def assets_module(rng: random.Random) -> str:
    blob = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(9000))).decode()
    lines = [blob[i:i + 76] for i in range(0, len(blob), 76)]
    body = "\n".join(f'    "{line}"' for line in lines)
    return ('"""Pre-trained weights for the demo classifier, embedded so the package works offline."""\n\n'
            "import base64\n\nimport numpy as np\n\n_WEIGHTS_B64 = (\n" + body + "\n)\n\n\n"
            "def load_demo_weights() -> np.ndarray:\n"
            '    """Decode the embedded float16 weights."""\n'
            "    return np.frombuffer(base64.b64decode(_WEIGHTS_B64), dtype=np.float16)\n")


def mlkit(rng: random.Random) -> list[tuple[str, str]]:
    files = [
        ("README.md", "# mlkit\n\nSmall, readable NumPy implementations of classic models for teaching: linear and "
                      "logistic regression, k-NN, k-means, Gaussian naive Bayes and a decision tree.\n\n"
                      "```python\nfrom mlkit.models.knn import KNeighborsClassifier\nfrom mlkit.datasets import load_json_samples\n\n"
                      "x, y = load_json_samples(\"data/samples.json\")\nmodel = KNeighborsClassifier(k=5).fit(x, y)\n```\n\n"
                      "`mlkit/_vendor/retry.py` is vendored from pyinventory.\n\nThe `scripts/` folder holds old experiment "
                      "exports kept for reference; do not copy from them.\n"),
        ("setup.cfg", "[metadata]\nname = mlkit\nversion = 0.2.0\n\n[options]\npackages = find:\ninstall_requires =\n    numpy>=1.24\n"),
        ("docs/usage.md", "# Usage\n\nAll models follow `fit(x, y)` / `predict(x)`. Inputs are NumPy arrays of shape "
                          "`(n_samples, n_features)`.\n\n## Scaling\n\nUse `mlkit.features.StandardScaler` before k-NN and "
                          "k-means; distances are otherwise dominated by large features.\n"),
        ("mlkit/__init__.py", '"""mlkit: small NumPy models."""\n\n__version__ = "0.2.0"\n'),
        ("mlkit/_vendor/__init__.py", ""),
        ("mlkit/_vendor/retry.py", RETRY),
        ("mlkit/metrics.py", METRICS),
        ("mlkit/features.py", FEATURES),
        ("mlkit/datasets.py", DATASETS),
        ("mlkit/assets.py", assets_module(rng)),
        ("mlkit/train.py", '''"""Train a model named in a YAML run config and print its metrics."""

from __future__ import annotations

import sys

from mlkit.datasets import load_json_samples
from mlkit.features import StandardScaler, train_test_split
from mlkit.metrics import accuracy, precision_recall_f1
from mlkit.models import MODELS


def run(model_name: str, params: dict, data_path: str = "data/samples.json", seed: int = 0) -> dict[str, float]:
    x, y = load_json_samples(data_path)
    x_train, x_test, y_train, y_test = train_test_split(x, y, seed=seed)
    scaler = StandardScaler().fit(x_train)
    model = MODELS[model_name](**params).fit(scaler.transform(x_train), y_train)
    pred = model.predict(scaler.transform(x_test))
    _, _, f1 = precision_recall_f1(y_test, pred)
    return {"accuracy": accuracy(y_test, pred), "f1": f1}


if __name__ == "__main__":
    print(run(sys.argv[1], {}))
'''),
        ("mlkit/models/__init__.py", '"""Model registry."""\n\nfrom .knn import KNeighborsClassifier\nfrom .linear import LogisticRegression\n'
                                     "from .naive_bayes import GaussianNB\nfrom .tree import DecisionTreeClassifier\n\n"
                                     'MODELS = {\n    "logistic": LogisticRegression,\n    "knn": KNeighborsClassifier,\n'
                                     '    "naive_bayes": GaussianNB,\n    "tree": DecisionTreeClassifier,\n}\n'),
        ("configs/experiment.yaml", experiment_yaml(rng, 420)),
        ("configs/small.yaml", "defaults:\n  seed: 0\nruns:\n  - name: smoke\n    model: knn\n    params:\n      k: 3\n"),
        ("data/samples.json", samples_json(rng, 900)),
        ("data/labels.csv", "label,name\n0,negative\n1,positive\n"),
    ]
    for name, text in MODELS.items():
        files.append((f"mlkit/models/{name}.py", text))
    for i in range(1, 7):
        files.append((f"scripts/exp_{i:02d}.py", experiment_script(i, rng)))
    for name, text in TESTS.items():
        files.append((f"tests/test_{name}.py", text))
    return files

