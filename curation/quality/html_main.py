"""The main content of a parsed page: boilerplate left out, the main container found.

:func:`strip_boilerplate` drops scripts, navigation, page headers and footers, comments and
containers whose class, id or role marks them as boilerplate (menus, cookie banners, sidebars…),
keeping any that hold code (``<pre>``) or the article's title and intro. :func:`main_container`
picks ``<main>``, an ``<article>``, ``role=main``… when it holds enough of the page's text.

>>> from curation.quality.html_code import parse
>>> root = strip_boilerplate(parse("<body><div class='sidebar'>Menu</div><main><p>Text</p></main></body>"))
>>> main_container(root).tag, text_content(root)
('main', 'Text')
"""

from __future__ import annotations

import functools
import re
from typing import Any

from lxml import etree

#: class/id words of boilerplate containers (trafilatura's and jusText's usual suspects).
BOILERPLATE = re.compile(
    r"(?:^|[\s_-])(?:nav|navbar|navigation|menu|breadcrumbs?|footer|header|masthead|sidebar|side-bar|cookie|cookies"
    r"|consent|gdpr|banner|advert|ads?|social|share|sharing|related|newsletter|subscribe|popup|modal|skip-link"
    r"|toc|table-of-contents|comments?|pagination|pager|signup|login)(?:$|[\s_-])",
    re.IGNORECASE,
)
DROP_TAGS = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "form", "button", "select",
             "nav", "header", "footer", "aside", "head")
#: tags whose class/id may mark a boilerplate container (not inline links such as ``<a class="header">``)
CONTAINERS = frozenset({"div", "section", "ul", "ol", "table", "span", "p", "aside", "dialog", "details", "dl", "menu"})
_TEXT = etree.XPath("string()", smart_strings=False)  #: lxml.html's ``text_content()``


def text_content(el: Any) -> str:
    """The text of ``el`` and its descendants, as lxml.html's ``text_content()``, for any lxml element."""
    return _TEXT(el)


@functools.lru_cache(maxsize=1 << 14)
def matches(pattern: re.Pattern[str], marker: str) -> bool:
    """``pattern.search(marker)``, remembered: a page repeats its class names on many elements."""
    return pattern.search(marker) is not None


def strip_boilerplate(root: Any) -> Any:
    """Drops scripts, navigation, headers, footers, comments and boilerplate containers from the
    whole document ``root`` belongs to (``root`` returned). Each pass lists its elements in document
    order as it starts; one inside a subtree an earlier drop took out changes nothing on the page."""
    doc = root.getroottree().getroot()
    for el in list(doc.iter(*DROP_TAGS)):
        if el.getparent() is None or has_descendant(el, "pre"):
            continue
        # an article's own <header>/<footer> holds its title and intro (MDN, many blogs): keep those
        if el.tag in ("header", "footer") and next(el.iterancestors("article", "main"), None) is not None:
            continue
        _drop_tree(el)
    for el in list(doc.iter(etree.Comment)):
        if el.getparent() is not None:
            el.getparent().remove(el)
    for el in list(doc.iter(*CONTAINERS)):
        if el.getparent() is not None and _boilerplate(el):
            _drop_tree(el)
    return root


_ROLES = ("navigation", "banner", "contentinfo", "complementary", "dialog")  #: roles of boilerplate containers


def _boilerplate(el: Any) -> bool:
    """A container to drop: a boilerplate role or hidden, or a boilerplate class/id without code or
    content; never inside a ``<pre>`` or a ``<h1>``–``<h3>``."""
    cls, ident, role = el.get("class"), el.get("id"), el.get("role")
    hidden = el.get("aria-hidden")
    if cls is None and ident is None and role is None and hidden is None:
        return False
    style = el.get("style")
    boiler = (hidden == "true" or (style is not None and "display:none" in style.replace(" ", ""))
              or (role is not None and role.lower() in _ROLES))
    if not (boiler or matches(BOILERPLATE, f"{cls or ''} {ident or ''}")):
        return False
    if next(el.iterancestors("pre", "h1", "h2", "h3"), None) is not None:
        return False
    return boiler or (not has_descendant(el, "pre") and len(text_content(el)) < 3000 and not _holds_content(el))


def has_descendant(el: Any, tag: str) -> bool:
    """Whether ``el`` holds a ``tag`` element (XPath ``.//tag``)."""
    return next(el.iterdescendants(tag), None) is not None


def _drop_tree(el: Any) -> None:
    """``el`` out of the tree with its children and text; its tail joins the previous sibling or the
    parent (lxml.html's ``drop_tree``)."""
    parent = el.getparent()
    if el.tail:
        previous = el.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + el.tail
        else:
            previous.tail = (previous.tail or "") + el.tail
    parent.remove(el)


def _holds_content(el: Any) -> bool:
    """A title or a real paragraph inside the main content: a ``layout__header`` holding the h1 and intro."""
    in_main = next(el.iterancestors("main", "article"), None) is not None
    if not (in_main or any(a.get("role") == "main" for a in el.iterancestors())):
        return False
    return has_descendant(el, "h1") or any(len(text_content(p)) >= 150 for p in el.iterdescendants("p"))


_MAIN = [etree.XPath(xp) for xp in ("//main", "//*[@role='main']", "//article", "//*[@itemprop='articleBody']",
                                    "//*[contains(concat(' ', normalize-space(@class), ' '), ' content ')]",
                                    "//*[@id='content']")]
_BODY = etree.XPath("//body")


def main_container(root: Any) -> Any:
    """The first of ``<main>``, role=main, ``<article>``… (the longest of its kind) holding over 30 %
    of ``root``'s text, else the ``<body>``, else ``root``."""
    for xp in _MAIN:
        found = xp(root)
        if found:
            best = max(found, key=lambda e: len(text_content(e)))
            # a short <article> teaser is not the page's main content
            if len(text_content(best)) > 0.3 * len(text_content(root)):
                return best
    body = _BODY(root)
    return body[0] if body else root
