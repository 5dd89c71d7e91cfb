"""code_web on pages without HTML (plain-text web documents): a page's own Markdown fences are its
code blocks, and where it has none, a window stands in for code only with code evidence, so that
Chinese prose that the code-content model scores as code (its negatives were English prose) is
not scored as code. Pages written for this test, run through the stage on a LocalCluster."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from classifiers.code_content import CodeContentClassifier, windows
from curation.quality.code_pages import code_evidence, code_windows, enough_evidence, page_score
from curation.quality.html_code import code_blocks
from pipelines.stages.code_web import CODE_WINDOW, CodeWebConfig, block_score
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

ZH_NOTE = """# Redis 的两种持久化方式

Redis 把数据放在内存里，进程退出或者机器断电之后，内存中的内容就没有了，所以需要定期写到磁盘。

## 快照

快照会把某一时刻的全部键值写成一个文件，复制这个文件就能在另一台机器上得到同样的数据。
缺点是两次快照之间写入的数据在故障时会丢失。下面这段脚本列出用户键的过期时间，然后在后台生成快照：

```python
import redis

client = redis.Redis(host="localhost", port=6379, db=0)
for key in client.scan_iter("user:*"):
    print(key, client.ttl(key))
client.bgsave()
```

数据很多的时候，生成快照要花不少时间，期间最好不要频繁触发。

## 追加日志

另一种方式是把每条写命令追加到日志文件末尾，重启时按顺序重放这些命令。
写入文件时内容先进入操作系统的缓冲区，什么时候真正落盘由同步选项决定，选项越严格越安全，但吞吐也越低。
"""
ZH_PROSE = """### 两种触发方式

epoll 通知事件有水平触发 LT（level trigger）和边缘触发 ET（edge trigger）两种方式。
水平触发下，epoll_wait() 返回就绪的描述符后，进程这次不处理也没关系，下一次 epoll_wait() 还会报告它。
边缘触发下，同一个事件只报告一次，进程必须马上读完，否则下次调用 epoll_wait() 不会再收到提醒。
边缘触发减少了重复通知的次数，效率更高，但只能配合 No-Blocking 的描述符使用，否则一次读写阻塞会拖住其它连接。

### 怎么选择

select 的 timeout 精度是微秒，poll 和 epoll 是毫秒，对时间要求特别严格的程序可以考虑 select。
poll 对描述符的数量没有上限，连接不多、对实时性要求一般的时候，用 poll 比 select 更方便。
程序只在 Linux 上运行、需要同时盯住成千上万个长连接的时候，epoll 才能体现出它的优势。
"""
EN_NOTE = """Reading a JSON file in Node.js

Node.js ships with everything you need to read a configuration file: the fs module reads the bytes and
JSON.parse turns them into an object. The promise-based API keeps the event loop free while the file is read.

```javascript
const fs = require("fs/promises");

async function loadConfig(path) {
  const raw = await fs.readFile(path, "utf8");
  return JSON.parse(raw);
}
```

Call it with the path of your file and handle the error if the file is missing or malformed. For large files,
stream the contents instead of reading them whole, so that memory stays bounded.
"""


def _run(tmp_path, overrides: list[str] | None = None) -> pd.DataFrame:
    from distributed import Client, LocalCluster

    rows = [{"doc_id": "zh_note", "text": ZH_NOTE, "source": "web"}, {"doc_id": "zh_prose", "text": ZH_PROSE, "source": "web"},
            {"doc_id": "en_note", "text": EN_NOTE, "source": "web"}]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    overrides = ["ingest.tokenizer=whitespace", "code_web.tier_min_files=1", *(overrides or [])]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        run_one("code_web", inp, tmp_path / "out", overrides, client=client)
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert ledger.empty
    return kept.set_index("doc_id")


def test_the_model_alone_recalls_all_three_pages() -> None:
    """The premise: each page passes the classifier's recall (probability and page evidence)."""
    clf, cfg = CodeContentClassifier(), CodeWebConfig()
    for text in (ZH_NOTE, ZH_PROSE, EN_NOTE):
        probs, parts = clf.predict_pages([windows(text, clf.window_lines, min_chars=clf.min_chars)])
        assert probs[0] >= cfg.classifier_threshold
        assert enough_evidence(*code_evidence(windows(text, clf.window_lines, min_chars=clf.min_chars), parts[0],
                                              cfg.classifier_threshold), cfg.classifier_min_code_chars)


def test_text_pages_score_their_fences_and_prose_is_not_code(tmp_path) -> None:
    by_id = _run(tmp_path)
    for doc, lang, language in (("zh_note", "python", "Python"), ("en_note", "javascript", "JavaScript")):
        (fence_lang, code), = code_blocks(by_id.loc[doc, "text"])  # the text is kept: no HTML to re-parse
        assert fence_lang == lang
        assert by_id.loc[doc, "code_web_recall"] == "classifier"
        assert by_id.loc[doc, "language"] == language  # the fence's language: the code blocks are the fences
        # code = the fence, explanation = the prose around it
        assert by_id.loc[doc, "code_score_structural"] == pytest.approx(page_score(by_id.loc[doc, "text"], [(lang, code)], block_score)[0])
    assert by_id.loc["zh_note", "code_score_structural"] > 7.0  # a code share of 16 %: the explanation term is whole
    prose = by_id.loc["zh_prose"]
    assert pd.isna(prose["code_web_recall"]) and math.isnan(prose["code_score_structural"])  # no window is code
    assert prose["text"] == ZH_PROSE and prose["source"] == "web" and pd.isna(prose["code_tier"])


def test_without_the_evidence_the_windows_count_on_probability_alone(tmp_path) -> None:
    by_id = _run(tmp_path, ["code_web.classifier_min_code_chars=0"])
    assert by_id.loc["zh_prose", "code_web_recall"] == "classifier"  # 0: the probability alone, at every step
    assert by_id.loc["zh_note", "language"] == "Python"  # fences are taken whatever the evidence


def test_a_window_of_chinese_prose_passes_the_page_evidence_but_is_not_code() -> None:
    clf = CodeContentClassifier()
    ws = windows(ZH_PROSE, clf.window_lines, min_chars=clf.min_chars)
    probs = clf.predict_windows(ws)
    assert all(q >= CODE_WINDOW for q in probs)  # the model calls every window code
    assert enough_evidence(*code_evidence(ws[:1], probs[:1], CODE_WINDOW), 40)  # names like epoll_wait(): enough ASCII
    assert code_windows(ws, probs, CODE_WINDOW, 40) == []  # but not half of the window's characters
    code_ws = windows(code_blocks(ZH_NOTE)[0][1], clf.window_lines, min_chars=clf.min_chars)
    code_probs = clf.predict_windows(code_ws)
    called = [w for w, q in zip(code_ws, code_probs, strict=True) if q >= CODE_WINDOW]
    assert called and code_windows(code_ws, code_probs, CODE_WINDOW, 40) == called  # code itself stays code
