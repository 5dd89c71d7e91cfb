"""What a stage's config names outside itself — model folders, a CUDA device — checked before
anything runs (``StageShape.preflight``, called by :func:`pipelines.recipe.check_configs`), so a
typo in a path fails the command at once rather than after the stages before it have run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.config import ConfigError
from curation.errors import brief


def need_model_folder(key: str, value: str | None, files: tuple[str, ...] = ("model.json",), how: str = "") -> None:
    """``value`` (when set) is a folder holding ``files``; else a ConfigError naming ``key``."""
    if value is None:
        return
    path = Path(str(value)).expanduser()
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a folder"
    else:
        missing = [f for f in files if not (path / f).is_file()]
        if not missing:
            return
        what = f"holds no {' nor '.join(missing)} (not a model folder)"
    raise ConfigError(f"{key} = {brief(str(value))}: {path} {what}{'; ' + how if how else ''}")


#: What each kind of model folder is for, to say so when one is given where another is needed: by
#: (kind, config.task) what a model is, by (use, kind) what it was trained for (:func:`model_use`).
MODEL_USES = {
    ("hashed_linear", "binary"): "a binary hashed n-gram model (curate train-classifier code-content or linear)",
    ("hashed_linear", "regression"): "a regression hashed n-gram model (curate train-classifier code-quality, linear --task regression or edu)",
    ("embedding_head", None): "an embedding head (curate train-classifier web-embedding or edu --kind head)",
    ("hashed_linear", None): "a hashed n-gram model (curate train-classifier linear)",
    ("ensemble", None): "an ensemble of models (like the shipped edu_default)",
    ("edu", None): "an edu scorer (curate train-classifier edu)",
    ("code_quality", None): "a code-quality model (curate train-classifier code-quality)",
    ("code_content", None): "a code-content model for code_web (curate train-classifier code-content)",
    ("web_quality", "hashed_linear"): "a web-quality linear model (curate train-classifier linear)",
    ("web_quality", "embedding_head"): "a web-quality embedding head (curate train-classifier web-embedding)",
    ("web_quality", None): "a web-quality model (curate train-classifier linear or web-embedding)",
}

#: What the model a setting names must have been trained for (:func:`model_use`), where the caller
#: of :func:`check_model` does not say: a model of the right kind trained for another stage (a
#: code-quality model as the edu scorer) ran without a word, and every web page came out edu-rich.
SETTING_USES = {
    "edu_score.scorer": "edu",
    "code_quality.learned_model": "code_quality",
    "code_web.classifier_model": "code_content",
}


def model_use(card: Any) -> str | None:
    """What a model card says its model was trained for — ``edu``, ``code_quality``, ``code_content``
    or ``web_quality`` — from the fields the training commands write (``rubric``, ``intended_use``,
    ``trained_by``, ``built_by``, ``name``); None when it says nothing of it (then only its kind is checked).

    >>> model_use({"rubric": "code_quality"}), model_use({"rubric": "2-d8ff9e629b8c"}), model_use({"kind": "hashed_linear"})
    ('code_quality', 'edu', None)
    >>> model_use({"trained_by": "curate train-classifier linear"}), model_use({"intended_use": "code_web recall: ..."})
    ('web_quality', 'code_content')
    """
    if not isinstance(card, dict):
        return None
    rubric, use = str(card.get("rubric") or ""), str(card.get("intended_use") or "")
    made = f"{card.get('trained_by') or ''} {card.get('built_by') or ''}"
    if rubric == "code_quality" or use.startswith("code_quality"):
        return "code_quality"
    if use.startswith("code_web"):
        return "code_content"
    if "web_quality stage" in use or "train-classifier linear" in made or "train-classifier web-embedding" in made \
            or "benchmarks/web_quality" in made:
        return "web_quality"
    if rubric or str(card.get("name") or "").startswith("edu"):  # train-classifier edu writes the edu rubric's version
        return "edu"
    return None


def _describe(kind: Any, task: Any, use: str | None = None) -> str:
    """What a model of ``kind`` and ``task`` is, and with ``use`` what it was trained for.

    >>> _describe("hashed_linear", "regression", "code_quality")
    'a regression hashed n-gram model, a code-quality model (curate train-classifier code-quality)'
    """
    what = MODEL_USES.get((kind, task)) or MODEL_USES.get((kind, None)) or (f"a model of kind {kind!r}" if kind else "")
    if use is None:
        return what or "a model"
    if (use, kind) in MODEL_USES:  # it names the kind itself
        return MODEL_USES[(use, kind)]
    return f"{what.split(' (')[0]}, {MODEL_USES[(use, None)]}" if what else MODEL_USES[(use, None)]


def check_model(key: str, value: str | None, kind: str | tuple[str, ...] | None = None, task: str | None = None,
                how: str = "", use: str | None = None) -> None:
    """A model folder named by ``key`` is whole and of the kind the stage needs, before anything runs:
    its ``model.json`` and weight files read (else :class:`DamagedFileError`, exit 4, naming the
    file), its ``kind`` (one of them, for a tuple), its ``config.task`` (of a ``hashed_linear``
    model) and what it was trained for (``use``, else :data:`SETTING_USES` of ``key``; checked
    when the card says: :func:`model_use`) as asked —
    else ConfigError naming ``key``, what the model is, what the setting needs and ``how`` to get
    one: a code-quality regression model given to code_web recalled every page, and one given to
    edu_score made every web page edu-rich."""
    if value is None:
        return
    need_model_folder(key, value, how=how)
    use = use or SETTING_USES.get(key)
    import numpy as np

    from classifiers.scorer import read_card
    from curation.errors import DamagedFileError

    path = Path(str(value)).expanduser()
    card = read_card(path / "model.json")
    got_kind, got_task, got_use = card.get("kind"), (card.get("config") or {}).get("task"), model_use(card)
    kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
    if (kinds and got_kind not in kinds) or (task is not None and got_kind == "hashed_linear" and got_task != task) \
            or (use is not None and got_use is not None and got_use != use):
        what = _describe(got_kind, got_task, got_use)
        need = _describe(kinds[0] if len(kinds) == 1 else None, task, use)
        if use and how:  # ``how`` says which command trains one
            need = need.rsplit(" (", 1)[0]
        raise ConfigError(f"{key} = {brief(str(value))} is {what}; this setting needs {need}{'; ' + how if how else ''}")
    for weights in sorted(path.rglob("*.npz")):
        try:
            with np.load(weights) as arrays:
                for name in arrays.files:
                    arrays[name]
        except Exception as exc:  # a cut or garbled file: zip, pickle and value errors alike
            raise DamagedFileError(f"{weights} cannot be read ({type(exc).__name__}: {exc}); it was cut or edited after "
                                   "it was written: train the model again") from None
    for sub in sorted(p for p in path.rglob("model.json") if p != path / "model.json"):  # an ensemble's members
        read_card(sub)



def files_stamp(path: str | Path) -> list[list[Any]]:
    """Each file under ``path`` (or ``path`` itself) as [relative name, size, mtime, ctime (ns),
    inode] (:func:`pipelines.marker.stat_stamp`, as ingest takes of its input files): what a stage's
    config hash takes of a model the user names. No file is read; a retrained model has new times,
    and one put back with its old modification time (``cp -p``, ``touch -r``) a new change time."""
    from pipelines.marker import stat_stamp

    root = Path(str(path)).expanduser()
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root] if root.exists() else []
    return [[f.relative_to(root).as_posix() if root.is_dir() else f.name, *stat_stamp(f.stat())] for f in files]


def need_device(key: str, device: str) -> None:
    """A ``cuda`` device needs a CUDA build of torch and a GPU; ``auto`` and ``cpu`` always run."""
    if not str(device).startswith("cuda"):
        return
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(f"{key} = {device!r}, but this machine has no CUDA device (or torch is a CPU build); "
                          "use auto (the GPU where there is one) or cpu")
