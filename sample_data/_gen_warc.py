"""``crawl/crawl.warc.gz``: a small crawl written with warcio's WARC writer, so a run can start from it.

Generated pages (no external text): English articles, code tutorials with ``<pre><code>`` blocks,
Chinese pages (UTF-8, and GBK declared only in ``<meta charset>``), each as a request + response
pair, plus the records a real crawl has that are not documents (warcinfo, metadata, requests) and
responses ingest must ledger: a redirect, an image, a PDF, a truncated record, a script-only page,
and one page crawled twice under another spelling of its URL (``http://`` vs ``https://www.``).
Record ids and dates are derived from the seed, and warcio's per-record gzip members carry no
timestamp, so the file is byte-identical on every run.
"""

from __future__ import annotations

import hashlib
import io
import random
from pathlib import Path

from _common import render_page, rng_for
from _web_articles import FOOTER, NAV, articles
from _web_code import code_pages

REL = "crawl/crawl.warc.gz"
ZH_TOPICS = ["数据库索引", "网络协议", "操作系统调度", "分布式缓存", "版本控制", "容器编排"]
ZH_SUBJECTS = ["工程师", "开发团队", "运维人员", "初学者", "架构师", "测试人员"]
ZH_CLAUSES = [
    "在设计{t}时需要先明确读写比例", "理解{t}的基本原理可以避免很多线上故障", "{s}通常会先在测试环境中验证{t}的配置",
    "关于{t}的讨论往往集中在性能与一致性之间的取舍", "一个常见的误区是把{t}当作万能的解决方案", "{s}应该定期检查{t}的监控指标",
    "文档中给出了{t}的完整示例和注意事项", "如果没有合理的{t}策略，系统在高峰期容易出现延迟",
]


def _zh_page(rng: random.Random, i: int) -> dict:
    topic = ZH_TOPICS[i % len(ZH_TOPICS)]
    paras = []
    for _ in range(rng.randint(4, 7)):
        sents = [rng.choice(ZH_CLAUSES).format(t=topic, s=rng.choice(ZH_SUBJECTS)) for _ in range(rng.randint(3, 5))]
        paras.append(("p", "，".join(sents) + "。"))
    title = f"{topic}入门笔记（第{i + 1}篇）"
    return {"title": title, "site": "技术笔记", "domain": "notes.example.cn", "blocks": [("h1", title), *paras],
            "topic": f"zh:{topic}"}


def _uuid(seed: int, n: int) -> str:
    h = hashlib.sha256(f"{seed}:warc:{n}".encode()).hexdigest()
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}>"


class _Writer:
    def __init__(self, seed: int) -> None:
        from warcio.warcwriter import WARCWriter

        self.buf, self.seed, self.n = io.BytesIO(), seed, 0
        self.writer = WARCWriter(self.buf, gzip=True)
        self.responses = 0

    def _headers(self, day: int, extra: dict | None = None) -> dict:
        self.n += 1
        return {"WARC-Record-ID": _uuid(self.seed, self.n), "WARC-Date": f"2024-03-{day:02d}T10:{self.n % 60:02d}:00Z", **(extra or {})}

    def record(self, kind: str, url: str | None, payload: bytes, day: int, http: list | None = None,
               status: str = "200 OK", extra: dict | None = None, content_type: str | None = None) -> None:
        from warcio.statusandheaders import StatusAndHeaders

        headers = StatusAndHeaders(status, http or [], protocol="HTTP/1.1") if http is not None else None
        rec = self.writer.create_warc_record(url or "", kind, payload=io.BytesIO(payload), http_headers=headers,
                                             warc_headers_dict=self._headers(day, extra), warc_content_type=content_type)
        self.writer.write_record(rec)
        self.responses += kind == "response"

    def page(self, url: str, body: bytes, day: int, ctype: str = "text/html; charset=utf-8", status: str = "200 OK",
             extra: dict | None = None) -> None:
        host = url.split("/")[2]
        req = f"GET /{url.split('/', 3)[3] if url.count('/') > 2 else ''} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        self.record("request", url, req, day, content_type="application/http; msgtype=request")
        self.record("response", url, body, day, http=[("Content-Type", ctype), ("Content-Length", str(len(body)))],
                    status=status, extra=extra)


def build(seed: int) -> tuple[bytes, int]:
    """The WARC bytes and how many response records (documents or ledger rows at ingest) it holds."""
    rng = rng_for(seed, "warc")
    w = _Writer(seed)
    w.record("warcinfo", None, b"software: curation sample_data/_gen_warc.py\r\nformat: WARC File Format 1.1\r\n", 1,
             content_type="application/warc-fields")
    pages = articles(rng, 12)
    code = code_pages(rng)
    pages += [code[i] for i in (0, 1, 2, 5, 9, 13, 17)] + [code[-1]]
    pages += [_zh_page(rng, i) for i in range(6)]
    for i, p in enumerate(pages):
        html = render_page(p["title"], p["site"], p["blocks"], NAV, FOOTER)
        url = f"https://www.{p['domain']}/p/{i:03d}"
        if p["topic"].startswith("zh:") and i % 2:  # GBK, declared only in the page (no HTTP charset)
            body = html.replace('<meta charset="utf-8">', '<meta charset="gbk">').replace('lang="en"', 'lang="zh"').encode("gbk")
            w.page(url, body, 2 + i % 20, ctype="text/html")
        else:
            w.page(url, html.replace('lang="en"', 'lang="zh"').encode() if p["topic"].startswith("zh:") else html.encode(), 2 + i % 20)
        if i == 3:  # the same page in a later snapshot, spelled http:// without www. and with a tracking parameter
            w.page(f"http://{p['domain']}/p/{i:03d}?utm_source=feed", html.encode(), 25)
    w.record("metadata", pages and "https://www.example.com/", b"fetchTimeMs: 120\r\n", 26, content_type="application/warc-fields")
    w.page("https://www.example.com/old-path", b"", 26, ctype="text/html", status="301 Moved Permanently")
    w.page("https://www.example.com/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, 26, ctype="image/png")
    w.page("https://www.example.com/report.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + b"0" * 900, 26, ctype="application/pdf")
    big = render_page("A long page", "Example", [("p", "Cut short by the crawler. " * 60)], NAV, FOOTER).encode()
    w.page("https://www.example.com/long", big[:700], 27, extra={"WARC-Truncated": "length"})
    shell = b"<!DOCTYPE html><html><head><script>location.replace('/app')</script></head><body><script src='/a.js'></script></body></html>"
    w.page("https://app.example.com/", shell, 27)
    return w.buf.getvalue(), w.responses


def write(out_dir: Path, seed: int) -> dict[str, int]:
    """Write :data:`REL` under ``out_dir``; the hook ``generate.py`` calls (returns {path: responses})."""
    data, n = build(seed)
    path = out_dir / REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {REL: n}
