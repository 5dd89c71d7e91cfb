"""How deep an HTML page nests, counted the way an HTML5 parser builds it, read before any parser runs.

Resiliparse's text extraction is quadratic in depth (10k nested divs 0.9 s, 20k 4 s, 200k 500 s),
and its parser (Lexbor, HTML5) nests what a tag count does not see: the ``/`` of ``<div/>`` is
ignored on an element that is not void, an end tag closes only an open element of its name that no
element of another kind shields (``</b>`` with no ``<b>`` open, or ``</span>`` over an open
``<div>``, closes nothing), and a table cell opens four levels (``table``, ``tbody``, ``tr``,
``td``). :func:`nesting_depth` replays the tags on a stack with those rules, in one pass of
amortised constant work per tag; where it cannot tell, it keeps an element open, so it counts at
least as deep as the parser (lxml, trafilatura's parser, stops at 255 levels).

>>> nesting_depth("<div/>" * 50), nesting_depth("<div></b>" * 50), nesting_depth("<div>x</div>" * 50)
(50, 50, 1)
>>> nesting_depth("<p>a" * 50), nesting_depth("<li><ul></li>" * 10), nesting_depth("<table><td>" * 10)
(1, 20, 40)
"""

from __future__ import annotations

import re

from curation.ingest.html_stack import FORMATTING, INTEGRATION, MARKERS, SCOPE, SPECIAL, Stack, names

#: nesting past which a page is no content; real pages nest a few dozen deep (at most 54 among the
#: 2,129 pages with HTML of ``web/web_docs.parquet``)
MAX_DEPTH = 5_000
#: formatting elements the parser may reopen (copies of ``<b>``, ``<a>``, … a block closed, at each text or
#: tag after it) before a page is no content: ``<p>`` + 1,000 distinct ``<b id=…>`` + ``<p>x`` × 3,000 (22 KB)
#: makes 3M elements (3.7 s of Resiliparse), 150 of them × 1,000 (5.4 KB) 151k (0.24 s); real pages
#: reopen at most 59 (``web/web_docs.parquet``), and a bound of 300,000 sends 72 of them to the full
#: count (100,000: 299), the guard's largest cost on real pages
MAX_REOPENED = 300_000

# a comment's start, or a start or end tag (name, and what follows it up to ">")
_TAG = re.compile(r"<!--|<(/?)([a-zA-Z][^\s/>]*)([^>]*)>")
#: elements whose content is text (no tags) when they are opened as HTML
_RAW = names("script style textarea title xmp iframe noembed noframes")
_RAW_END = {name: re.compile(rf"</{name}[\s/>]", re.IGNORECASE) for name in _RAW}
_VOID = names("area base br col embed hr img image input keygen link meta param source track wbr basefont bgsound "
              "frame html head body frameset")  # the last four merge into the document's own
_HEADINGS = names("h1 h2 h3 h4 h5 h6")
#: end tags that close their element through any element but a scope boundary
_BLOCK_END = names("address article aside blockquote button center details dialog dir div dl fieldset figcaption figure "
                   "footer header hgroup listing main menu nav ol pre search section summary ul p li dd dt h1 h2 h3 h4 "
                   "h5 h6 applet marquee object template select")
_TABLE_PARTS = names("tbody thead tfoot tr td th caption colgroup")
#: start tags that close an open ``<p>`` (in button scope)
_CLOSES_P = names("address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer "
                  "header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 h6 pre listing form li dd "
                  "dt")  # and table, but not in quirks mode
#: start tags that leave SVG or MathML content (the parser closes the foreign elements first)
_BREAKOUT = names("b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li "
                  "listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var")
#: special elements whose start tag reopens the formatting elements a block closed
_REOPENS = names("button applet marquee object select xmp noscript")
_FONT_BREAKS = re.compile(r"\s(?:color|face|size)\s*=", re.IGNORECASE)


def _self_closing(rest: str) -> bool:
    """Whether a start tag ends in ``/>`` the parser reads as self-closing (not the end of an unquoted
    or unterminated attribute value)."""
    return (rest.endswith("/") and (len(rest) == 1 or rest[-2] in " \t\n\r\f\"'")
            and rest.count('"') % 2 == 0 and rest.count("'") % 2 == 0)


def _start(s: Stack, name: str, rest: str) -> None:
    if s.in_foreign():
        if name not in _BREAKOUT and not (name == "font" and _FONT_BREAKS.search(rest)):
            if not _self_closing(rest):
                s.push(name, name if name in ("svg", "math") else s.foreign[-1])
            return
        while s.in_foreign():  # an HTML tag closes the SVG/MathML elements it stands in
            s.pop_to(len(s.names) - 1)
    if name in ("input", "keygen", "textarea", "select") and (i := s.in_select()) >= 0:
        s.pop_to(i)  # these close the select the parser is in
        if name == "select":
            return
    if name in _VOID or (name in ("svg", "math") and _self_closing(rest)):
        if name == "hr":
            s.close("p", s.scope)
        elif name not in SPECIAL:  # br, img, input: the parser reopens the formatting elements first
            s.reopen()
        return
    if name in _CLOSES_P:
        s.close("p", s.scope)
    # these close the current element if it is one of them, and a reopened formatting element may be current
    if name in _HEADINGS and s.names and s.names[-1] in _HEADINGS and not s.active:
        s.pop_to(len(s.names) - 1)
    if name in ("option", "optgroup") and s.names and s.names[-1] == "option" and not s.active:
        s.pop_to(len(s.names) - 1)  # an open option closes; an optgroup nests in an optgroup outside a select
    if name == "optgroup" and s.names and s.names[-1] == "optgroup" and s.in_select() >= 0:
        s.pop_to(len(s.names) - 1)
    if name in ("li", "dd", "dt", "a", "nobr", "button"):  # the same start tag closes the open one
        for other in ("dd", "dt") if name in ("dd", "dt") else (name,):
            s.close(other, s.special if name != "button" else s.scope)
        if name in ("a", "nobr"):
            s.drop_formatting(name)
    if name in _TABLE_PARTS or name == "table":
        t = s.last("table")
        if name == "table" and t >= 0 and t >= max(s.last("td"), s.last("th"), s.last("caption")):
            s.pop_to(t)  # a table directly in a table closes it
        elif name in _TABLE_PARTS:
            bound = s.names[s.scope[-1]] if s.scope[-1] > t else ""
            if t < 0 or bound == "template" or bound in INTEGRATION:  # not in a table: ignored, but
                if len(s.html) - 1 < len(s.names):  # Lexbor opens it in SVG or MathML
                    s.push(name + "?")  # (kept open: no end tag closes it)
                return
            s.pop_to(t + 1)
            if name in ("tr", "td", "th"):
                s.push("tbody")
            if name in ("td", "th"):
                s.push("tr")
    if name not in SPECIAL or name in _REOPENS:  # a block start tag does not reopen them (text in it does)
        s.reopen()
    s.push(name, name if name in ("svg", "math") else "")
    if name in FORMATTING:
        s.add_formatting(name, rest.strip())


def _end(s: Stack, name: str) -> None:
    if name in ("br", "p") or name in FORMATTING and 0 <= s.last(name) >= s.scope[-1]:
        while s.in_foreign():  # leave SVG or MathML content as their start tags do (Lexbor: and an open b, i, …)
            s.pop_to(len(s.names) - 1)
    if s.foreign and s.foreign[-1]:  # an SVG or MathML element of that name above every HTML element closes
        i = max(s.last(f"svg:{name}"), s.last(f"math:{name}"))
        if i > s.html[-1]:
            s.pop_to(i)
            return
    if name == "template":  # closes the last template through any element
        if s.last("template") >= 0:
            s.pop_to(s.last("template"), clear=True)
        return
    if name == "select":
        if (i := s.in_select()) >= 0:
            s.pop_to(i)
        return
    if s.in_select() >= 0 and name not in ("option", "optgroup") and name not in _TABLE_PARTS and name != "table":
        return  # in a select, other end tags are ignored
    if name in _TABLE_PARTS or name == "table":
        table = s.last("table")
        if name == "table" or s.last(name) > table:
            s.close(name, [max(s.last("template"), s.last("html"))])
    elif name == "form":
        return  # removes the form element alone: what was opened in it stays open
    elif name in _BLOCK_END:
        if name in _HEADINGS:
            s.close(max(_HEADINGS, key=s.last), s.scope)
        else:
            s.close(name, s.scope, clear=True)
    else:  # "any other end tag": closes only an element of its name with no special element above it
        if name in FORMATTING and s.last(name) >= s.scope[-1] or s.last(name) < 0:
            s.drop_formatting(name)
        s.close(name, s.special)


#: start tags that take more than a push (and end tags more than a pop of the same open element)
_SLOW = (_VOID | _HEADINGS | SPECIAL | SCOPE | _TABLE_PARTS | _CLOSES_P | FORMATTING | MARKERS | _RAW
         | names("svg math plaintext option optgroup li dd dt a nobr button form"))


def most_levels(html: str, elements: int | None = None) -> int:
    """A bound on the levels the tags of ``html`` open: one per start tag, three for a table cell or
    row (the ``tbody`` and ``tr`` a parser adds), counted at C speed as ``<`` less ``</``, plus two per
    ``<t`` (``elements``: ``<`` less ``</`` where counted already). A formatting element a block closes
    counts as open until its end tag (the parser reopens it).

    >>> most_levels("<table><td>a</td></table>"), most_levels("<div/>" * 3)
    (6, 3)
    """
    if elements is None:
        elements = html.count("<") - html.count("</")
    return elements + 2 * (html.count("<t") + html.count("<T"))


#: start tags of formatting elements but ``a`` and ``nobr`` (their own start tag closes an open one)
_FORMATTING_TAG = re.compile(r"<(?:b|big|code|em|font|i|s|small|strike|strong|tt|u)(?:[\s/][^>]*)?>", re.IGNORECASE)


def most_reopened(html: str, enough: int = MAX_REOPENED) -> int:
    """A bound on the formatting elements the parser reopens in ``html``, read at C speed: each text or tag
    reopens at most every start tag before it, and at most the list of formatting elements, which holds
    one ``a``, one ``nobr`` and three alike of each other start tag (the same name and attributes); the
    second bound is read only where the first passes ``enough``.

    >>> most_reopened("<p><b>x<p><b>y"), most_reopened("<p><b>x" * 1000, 0)
    (20, 10005)
    """
    tags = html.count("<")
    if tags * (tags + 1) <= enough:
        return tags * (tags + 1)
    return min(tags * (tags + 1), (2 + 3 * len(set(_FORMATTING_TAG.findall(html)))) * (tags + 1))


def nesting_depth(html: str, limit: int | None = None, levels: int | None = None, reopened: int | None = None) -> int:
    """The deepest nesting of ``html`` as an HTML5 parser builds it (at least that deep), or
    ``limit + 1`` as soon as it passes ``limit`` or the parser reopens more than ``reopened`` formatting
    elements; with a ``limit`` and no ``reopened``, it stops reading where the tags left could not reach
    it (``levels``: :func:`most_levels`, where counted already) and gives the depth so far."""
    s = Stack()
    names, foreign, at, html_at = s.names, s.foreign, s.at, s.html
    end = html.rfind(">") + 1  # no tag ends after the last ">": past it every "<" would search to the end
    slack = None if limit is None or reopened is not None else limit - (most_levels(html) if levels is None else levels)
    pos = used = 0
    while m := _TAG.search(html, pos, end):
        if s.waiting and m.start() > pos:  # text (white space too): the parser reopens the formatting elements
            s.reopen()
            if reopened is not None and s.made > reopened:
                return limit + 1
        pos, name = m.end(), m.group(2)
        if name is None:  # a comment, to "-->" ("<!-->" and "<!--->" are empty ones)
            if html.startswith((">", "->"), pos):
                continue
            pos = html.find("-->", pos) + 3
            if pos < 3:
                break
            continue
        name = name.lower()
        if m.group(1):
            if names and names[-1] == name and name not in _SLOW:
                names.pop(), foreign.pop(), at[name].pop(), html_at.pop()
            elif names and names[-1] == name and name != "form":
                if name in FORMATTING:
                    s.drop_formatting(name)
                s.pop_to(len(names) - 1, clear=True)
            else:
                _end(s, name)
            continue
        used += 3 if name[0] == "t" else 1
        if name not in _SLOW and not (foreign and foreign[-1]):
            if s.waiting:
                s.reopen()
            html_at.append(len(names))
            names.append(name), foreign.append(""), at.setdefault(name, []).append(len(names) - 1)
            if len(names) + s.active > s.deepest:
                s.deepest = len(names) + s.active
        elif (name == "plaintext" or name in _RAW) and len(html_at) - 1 == len(names):  # no SVG or MathML open
            if name == "plaintext" or not (close := _RAW_END[name].search(html, pos)):
                break  # the rest of the page is text
            pos = close.start()
            continue
        else:
            _start(s, name, m.group(3))
        if limit is not None and (s.deepest > limit or reopened is not None and s.made > reopened):
            return limit + 1
        if slack is not None and len(names) + s.active - used <= slack:
            break
    return s.deepest


def parser_depth(html: str) -> int:
    """Elements on the deepest path of the tree Resiliparse (Lexbor) parses, ``html`` and ``body``
    included: what :func:`nesting_depth` bounds from above (tests and ``benchmarks/extract``)."""
    from resiliparse.parse.html import HTMLTree

    best, todo = 0, [(HTMLTree.parse(html).document, 0)]
    while todo:
        node, depth = todo.pop()
        best = max(best, depth)
        child = node.first_child
        while child is not None:
            if child.type == 1:  # an element
                todo.append((child, depth + 1))
            child = child.next
    return best
