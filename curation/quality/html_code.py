"""Code-related web pages: recall by HTML code tags, and a re-parse that keeps code formatting.

:func:`code_tag_stats` counts ``<pre>`` blocks, ``<code>`` elements and syntax-highlighter
classes (Pygments ``highlight``, Prism/highlight.js ``language-*``/``hljs``, SyntaxHighlighter
``brush:``…). :func:`reparse_html` extracts the main content with lxml — navigation, headers,
footers, cookie banners, sidebars and scripts left out — and writes code blocks as fenced
Markdown blocks with their indentation and line breaks intact (a naive extractor folds every
whitespace run to one space and loses them).

>>> html = '<html><body><nav>Home</nav><p>Use it:</p><pre><code class="language-py">if x:\\n    y()</code></pre></body></html>'
>>> print(reparse_html(html))
Use it:
<BLANKLINE>
```py
if x:
    y()
```
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import lxml.html
from lxml import etree

from curation.quality.html_main import has_descendant, main_container, matches, strip_boilerplate, text_content

#: the words of syntax-highlighter classes (:data:`HIGHLIGHT_CLASS`)
HIGHLIGHT_WORDS = ("highlight", "hljs", "prettyprint", "sourceCode", "codehilite", "syntaxhighlighter", "brush:", "language-",
                   "lang-", "code-block", "blob-code", "rouge", "chroma", "prism")
HIGHLIGHT_CLASS = re.compile(r"\b(?:" + "|".join(map(re.escape, HIGHLIGHT_WORDS)) + ")", re.IGNORECASE)
_LANG_CLASS = re.compile(r"(?:language|lang|highlight-source|highlight|brush:)[-_: ]?([A-Za-z0-9+#]+)", re.IGNORECASE)
#: line-number gutters of highlighters, left out of code text
_GUTTER = re.compile(r"\b(?:linenos?|line-?numbers?|gutter|lineno|ln-num|hljs-ln-n)\b", re.IGNORECASE)
#: elements left out of the text: line-number gutters and heading permalinks
_SKIP = re.compile(r"\b(?:linenos?|line-?numbers?|gutter|lineno|headerlink|anchorjs-link|anchor-link|hash-link)\b", re.IGNORECASE)
BLOCK_TAGS = frozenset({"p", "div", "section", "article", "main", "blockquote", "table", "ul", "ol", "dl", "figure",
                        "h1", "h2", "h3", "h4", "h5", "h6", "tr", "li", "dt", "dd", "br", "hr", "figcaption", "details"})


@dataclasses.dataclass(frozen=True)
class CodeTagStats:
    """What :func:`code_tag_stats` counts on a page."""

    pre_blocks: int
    code_elements: int
    highlighted: int  #: elements with a syntax-highlighter class
    code_chars: int  #: characters inside ``<pre>`` (or block-level ``<code>``)

    def recalled(self, min_blocks: int = 1, min_chars: int = 40) -> bool:
        """A code page: at least ``min_blocks`` code blocks holding ``min_chars`` characters."""
        return (self.pre_blocks + self.highlighted) >= min_blocks and self.code_chars >= min_chars

    def may_recall(self) -> bool:
        """Whether a recall by tags can take the page at any setting that needs code characters:
        a block and a character (:func:`curation.quality.page_code.page_code` renders those pages)."""
        return self.recalled(1, 1)


#: lxml's HTML parser without lxml.html's element classes: the same tree, and no Python class
#: lookup per element the walks below visit (they work on either kind of element)
_PARSER = etree.HTMLParser()


def parse(html: str) -> Any:
    """An lxml tree of ``html`` (as :func:`lxml.html.fromstring` parses it) or None when it cannot be parsed."""
    if not html or not html.strip():
        return None
    data = html.encode("utf-8", "surrogatepass") if html.lstrip().startswith("<?xml") else html
    try:
        try:
            return lxml.html.fromstring(data, parser=_PARSER)
        except AttributeError:  # a fragment with several <body>s: lxml.html merges them with its own elements
            return lxml.html.fromstring(data)
    except (etree.ParserError, ValueError, etree.XMLSyntaxError):
        return None


def code_tag_stats(html: str | None, root: Any = None) -> CodeTagStats:
    """Code blocks of a page, from its HTML.

    >>> code_tag_stats('<p>x</p><pre>for i in range(3):\\n    print(i)</pre>').pre_blocks
    1
    """
    root = root if root is not None else parse(html or "")
    if root is None:
        return CodeTagStats(0, 0, 0, 0)
    pres = root.xpath("//pre")
    codes = root.xpath("//code")
    highlighted = sum(1 for el in root.xpath("//*[@class]") if el.tag in ("div", "pre", "code", "table", "td")
                      and HIGHLIGHT_CLASS.search(el.get("class", "")))
    chars = sum(len(text_content(p)) for p in pres)
    # block-level <code> outside <pre> (e.g. <code style="display:block">) with line breaks
    chars += sum(len(text_content(c)) for c in codes if c.getparent() is not None and c.getparent().tag != "pre"
                 and "\n" in text_content(c))
    return CodeTagStats(len(pres), len(codes), highlighted, chars)


def reparse_html(html: str | None, root: Any = None) -> str:
    """Main text of a page with fenced code blocks; "" when the HTML cannot be parsed."""
    root = root if root is not None else parse(html or "")
    if root is None:
        return ""
    root = strip_boilerplate(root)
    main = main_container(root)
    out: list[str] = []
    _render(main, out)
    return _BLANK_LINES.sub("\n\n", _TRAILING_SPACE.sub("\n", "".join(out))).strip()


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of the fenced blocks of a re-parsed text.

    >>> code_blocks("a\\n```py\\nx = 1\\n```\\nb")
    [('py', 'x = 1')]
    """
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```([^\n`]*)\n(.*?)\n```$", text, re.DOTALL | re.MULTILINE)]


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*")


def markdown_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of the fenced blocks of Markdown a page holds as text (CommonMark's fences:
    ````` ``` ````` or ``~~~``, up to three spaces in, an info string, a closing fence of the same
    character at least as long, CRLF or LF). A text cut out of a longer one may start inside a code
    block, so its first fence closes one: a block opened by a bare fence is prose when a fence with
    a language follows it (that one opens), and one left open at the end counts only when it named
    its language.

    >>> markdown_blocks("ls\\n```\\n\\nprose 中文\\n\\n```sh\\necho x\\n```\\n")
    [('sh', 'echo x')]
    >>> markdown_blocks("a\\r\\n~~~py \\r\\nx = 1\\r\\n~~~ \\r\\nb"), markdown_blocks("```c\\nint x;")
    ([('py', 'x = 1')], [('c', 'int x;')])
    """
    out: list[tuple[str, str]] = []
    fence, lang, body = "", "", []  # the open block's fence ("" when none is open)
    for line in text.replace("\r\n", "\n").split("\n"):
        m = _FENCE.fullmatch(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2):
                out.append((lang, "\n".join(body)))
                fence = ""
                continue
            if m and m.group(2) and not lang:  # a fence with a language inside a bare block: that block was prose
                fence, lang, body = m.group(1), m.group(2), []
                continue
            body.append(line)
        elif m:
            fence, lang, body = m.group(1), m.group(2), []
    if fence and lang:
        out.append((lang, "\n".join(body)))
    return out


def _fold(s: str) -> str:
    """Each whitespace run of a non-empty ``s`` as one space (``re.sub(r"\\s+", " ", s)``)."""
    if s.isspace():
        return " "
    core = " ".join(s.split())
    return (" " if s[0].isspace() else "") + core + (" " if s[-1].isspace() else "")


def _named(el: Any, pattern: Any) -> bool:
    """Whether ``pattern`` matches the element's class or id (read once each; most elements have neither)."""
    cls, ident = el.get("class"), el.get("id")
    return (cls is not None or ident is not None) and matches(pattern, f"{cls or ''} {ident or ''}")


def _render(el: Any, out: list[str]) -> None:
    tag = el.tag
    if not isinstance(tag, str):
        tag = ""
    else:
        if _named(el, _SKIP):
            if (tail := el.tail):
                out.append(_fold(tail))
            return
    if tag == "pre" or (tag == "div" and _is_code_div(el)):
        code = _code_text(el)
        if code.strip():
            out.append(f"\n\n```{_code_language(el)}\n{code.strip(chr(10))}\n```\n\n")
        if (tail := el.tail):
            out.append(_fold(tail))
        return
    opening = _OPEN.get(tag)
    if opening is not None:
        out.append(opening)
    if tag == "code":
        inner = text_content(el)
        if inner.strip():
            out.append(f"`{inner.strip()}`" if "\n" not in inner.strip() else f"\n\n```\n{inner.strip(chr(10))}\n```\n\n")
    else:
        if (text := el.text):
            out.append(_fold(text))
        for child in el:
            _render(child, out)
    closing = _CLOSE.get(tag)
    if closing is not None:
        out.append(closing)
    if (tail := el.tail):
        out.append(_fold(tail))


#: what :func:`_render` writes before an element's content: ``<br>`` a line break, headings their
#: ``#``s, list items a dash, cells a bar, the other block tags a blank line (rows and definitions a line break)
_OPEN = {**{t: ("\n\n" if t not in ("tr", "dt", "dd") else "\n") for t in BLOCK_TAGS}, "br": "\n",
         **{f"h{k}": "\n\n" + "#" * k + " " for k in range(1, 7)}, "li": "\n- ", "td": " | ", "th": " | "}
#: what it writes after the content: block tags (not ``br``, ``li``, cells) a blank line or a line break
_CLOSE = {t: ("\n\n" if t not in ("tr", "dt", "dd") else "\n") for t in BLOCK_TAGS if t not in ("br", "li", "td", "th")}


_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_BLANK_LINES = re.compile(r"\n{3,}")


def _is_code_div(el: Any) -> bool:
    cls = el.get("class") or ""
    return matches(HIGHLIGHT_CLASS, cls) and not has_descendant(el, "pre") and "\n" in text_content(el)


def _code_text(el: Any) -> str:
    """The text of a code block, line numbers left out and ``<br>`` read as a newline."""
    parts: list[str] = []
    _code_walk(el, el, parts)
    return "".join(parts).replace("\r\n", "\n").replace("\xa0", " ")


def _code_walk(node: Any, top: Any, parts: list[str]) -> None:
    """The text of ``node`` (a node of the code block ``top``) into ``parts``."""
    tag = node.tag
    if not isinstance(tag, str):
        tag = ""
    else:
        if _named(node, _GUTTER):
            if (tail := node.tail):
                parts.append(tail)
            return
        if tag == "br":
            parts.append("\n")
    if (text := node.text) and tag not in ("script", "style"):
        parts.append(text)
    for child in node:
        _code_walk(child, top, parts)
    if tag in ("div", "p", "tr") and parts and not parts[-1].endswith("\n"):
        parts.append("\n")  # line-per-div highlighters (e.g. <div class="line">)
    if node is not top and (tail := node.tail):
        parts.append(tail)


def _code_language(el: Any) -> str:
    for node in [el, *list(el.iterdescendants("code"))[:2], *list(el.iterancestors())[:3]]:
        m = _LANG_CLASS.search(node.get("class") or "")
        if m and m.group(1).lower() not in ("source", "text", "plain", "none", "default"):
            return m.group(1).lower()
        if node.get("data-lang"):
            return str(node.get("data-lang")).lower()
    return ""
