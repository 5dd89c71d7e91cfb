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


#: What each kind of model folder is for, to say so when one is given where another is needed.
MODEL_USES = {
    ("hashed_linear", "binary"): "a binary hashed n-gram model (curate train-classifier code-content or linear)",
    ("hashed_linear", "regression"): "a regression hashed n-gram model (curate train-classifier code-quality, linear --task regression or edu)",
    ("embedding_head", None): "an embedding head (curate train-classifier web-embedding or edu --kind head)",
    ("hashed_linear", None): "a hashed n-gram model (curate train-classifier linear)",
}


def check_model(key: str, value: str | None, kind: str | None = None, task: str | None = None, how: str = "") -> None:
    """A model folder named by ``key`` is whole and of the kind the stage needs, before anything runs:
    its ``model.json`` and weight files read (else :class:`DamagedFileError`, exit 4, naming the
    file), its ``kind`` and ``config.task`` as asked (else ConfigError naming ``key``: a code-quality
    regression model given to code_web recalled every page)."""
    if value is None:
        return
    need_model_folder(key, value, how=how)
    import numpy as np

    from curation.errors import DamagedFileError, read_json_file

    path = Path(str(value)).expanduser()
    card = read_json_file(path / "model.json")
    got = (card.get("kind"), (card.get("config") or {}).get("task")) if isinstance(card, dict) else (None, None)
    if (kind is not None and got[0] != kind) or (task is not None and got[1] != task):
        what = MODEL_USES.get(got) or MODEL_USES.get((got[0], None)) or f"a model of kind {got[0]!r}"
        need = MODEL_USES.get((kind, task)) or MODEL_USES.get((kind, None)) or f"kind {kind!r}"
        raise ConfigError(f"{key} = {brief(str(value))} is {what}; this setting needs {need}{'; ' + how if how else ''}")
    for weights in sorted(path.rglob("*.npz")):
        try:
            with np.load(weights) as arrays:
                for name in arrays.files:
                    arrays[name]
        except Exception as exc:  # a cut or garbled file: zip, pickle and value errors alike
            raise DamagedFileError(f"{weights} cannot be read ({type(exc).__name__}: {exc}); it was cut or edited after "
                                   "it was written: train the model again") from None


def files_stamp(path: str | Path) -> list[list[Any]]:
    """Each file under ``path`` (or ``path`` itself) as [relative name, size, mtime in ns]: what a
    stage's config hash takes of a model the user names (no file is read; a retrained model has new
    times)."""
    root = Path(str(path)).expanduser()
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root] if root.exists() else []
    return [[f.relative_to(root).as_posix() if root.is_dir() else f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in files]


def need_device(key: str, device: str) -> None:
    """A ``cuda`` device needs a CUDA build of torch and a GPU; ``auto`` and ``cpu`` always run."""
    if not str(device).startswith("cuda"):
        return
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(f"{key} = {device!r}, but this machine has no CUDA device (or torch is a CPU build); "
                          "use auto (the GPU where there is one) or cpu")
