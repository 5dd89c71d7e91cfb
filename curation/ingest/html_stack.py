"""The HTML5 parser's stack of open elements and list of active formatting elements, as
:func:`curation.ingest.nesting.nesting_depth` replays them: names and positions only, every question O(1)."""

from __future__ import annotations

from collections import deque


def names(words: str) -> frozenset[str]:
    """The element names in ``words`` (space-separated)."""
    return frozenset(words.split())


#: HTML5 "special" elements: an end tag of another name does not close past one
SPECIAL = names("address applet article aside blockquote button caption center colgroup dd details dialog dir div dl "
                "dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup iframe li listing main "
                "marquee menu nav object ol p pre search section select summary table tbody td template tfoot th thead tr "
                "ul noscript")
#: scope boundaries: the end tag of a special element closes nothing past one (button and list scope included)
SCOPE = names("applet caption html table td th marquee object template button ol ul select")
#: SVG and MathML elements whose content is HTML: special, and scope boundaries
INTEGRATION = frozenset(f"{ns}:{name}" for ns in ("svg", "math")  # Lexbor takes either namespace
                        for name in names("foreignobject desc title mi mo mn ms mtext annotation-xml"))
#: formatting elements: the parser reopens (clones) those a block closed implicitly, at the next tag or text
FORMATTING = names("a b big code em font i nobr s small strike strong tt u")
#: elements that put a marker in the list of formatting elements: none of those before it is reopened inside them;
#: closing a cell or caption clears the list to its marker, and so do the others' end tags (an implicit close does not)
MARKERS = names("applet object marquee template td th caption")
CELLS = names("td th caption")


class _Active:
    """The parser's list of active formatting elements between two markers: how many of them are
    closed (the parser reopens those), and per name and per name with attributes the order they came
    in (entries removed lazily)."""

    def __init__(self) -> None:
        self.closed = 0
        self.cleared = False
        self.into: _Active | None = None  # the segment its entries moved to when its marker closed without clearing
        self.by_key: dict[tuple[str, str], deque[int]] = {}
        self.by_name: dict[str, list[int]] = {}


class Stack:
    """The parser's stack of open elements: names, whether each is SVG/MathML, and the positions of
    each name, of special elements and of scope boundaries (each kept in order, so every question is O(1));
    and its active formatting elements (:class:`_Active`): a page nests at most as deep as the stack and
    the closed ones among them (``active``) together.

    A closed entry waits (``waiting``) until the next text or start tag reopens it (:meth:`reopen`); its
    copy then sits above the element on top of the stack (``above``) and waits again when that element is
    popped. ``made`` counts the copies reopened; an entry the list drops (a fourth alike) while its copy
    is open stays counted in ``active`` until that copy is popped."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.foreign: list[str] = []  # "svg" or "math" for a foreign element, "" for an HTML one
        self.html: list[int] = [-1]
        self.at: dict[str, list[int]] = {}
        self.special: list[int] = [-1]
        self.scope: list[int] = [-1]
        self.deepest = 0
        self.segments = [_Active()]
        self.live: set[int] = set()
        self.closed: set[int] = set()
        self.entry_at: dict[int, int] = {}  # stack position of an open formatting element -> its entry
        self.active = 0
        self.seq = 0
        self.made = 0
        self.waiting: set[int] = set()
        self.above: dict[int, list[int]] = {}  # stack position -> reopened entries whose copy sits above it
        self.dropped_open: set[int] = set()  # entries out of the list whose copy is still open
        self.seg_of: dict[int, _Active] = {}

    def push(self, name: str, ns: str = "") -> None:
        """Open ``name``: an HTML element, or an SVG or MathML one (``ns``), kept as ``ns:name``."""
        i = len(self.names)
        name = f"{ns}:{name}" if ns else name
        self.names.append(name)
        self.foreign.append(ns)
        self.at.setdefault(name, []).append(i)
        if not ns:
            self.html.append(i)
        if name in SPECIAL or name in INTEGRATION:
            self.special.append(i)
        if name in SCOPE or name in INTEGRATION:
            self.scope.append(i)
        if name in MARKERS:
            self.segments.append(_Active())
        self.deepest = max(self.deepest, i + 1 + self.active)

    def add_formatting(self, name: str, attrs: str) -> None:
        """A formatting element enters the list; a fourth with the same name and attributes pushes
        out the first (Noah's Ark clause)."""
        seg, key = self.segments[-1], (name, attrs)
        same = seg.by_key.setdefault(key, deque())
        while same and same[0] not in self.live:
            same.popleft()
        if len(same) >= 3:
            entry = same.popleft()
            if entry in self.closed and entry not in self.waiting:  # its copy stays open until popped
                self.live.discard(entry), self.closed.discard(entry)
                seg.closed -= 1
                self.dropped_open.add(entry)
            else:
                self._drop(seg, entry)
        self.seq += 1
        self.live.add(self.seq)
        self.seg_of[self.seq] = seg
        same.append(self.seq)
        seg.by_name.setdefault(name, []).append(self.seq)
        self.entry_at[len(self.names) - 1] = self.seq  # the element just pushed

    def drop_formatting(self, name: str) -> None:
        """The last entry named ``name`` leaves the list (its end tag)."""
        seg = self.segments[-1]
        entries = seg.by_name.get(name, [])
        while entries and entries[-1] not in self.live:
            entries.pop()
        if entries:
            self._drop(seg, entries.pop())

    def _drop(self, seg: _Active, entry: int) -> None:
        self.live.discard(entry)
        if entry in self.closed:
            self.closed.discard(entry)
            seg.closed -= 1
            self.active -= 1

    def _alive(self, entry: int) -> bool:
        seg = self.seg_of[entry]
        while seg.into is not None:
            seg = seg.into
        return entry in self.closed and not seg.cleared

    def reopen(self) -> None:
        """Text or a start tag: the parser reopens the closed entries, above the element on top of the stack."""
        if self.waiting:
            entries = [e for e in self.waiting if self._alive(e)]
            self.made += len(entries)
            self.above.setdefault(len(self.names) - 1, []).extend(entries)
            self.waiting.clear()

    def last(self, name: str) -> int:
        where = self.at.get(name)
        return where[-1] if where else -1

    def pop_to(self, i: int, clear: bool = False) -> None:
        """Pop every element from the top down to position ``i`` (included); ``clear``: that one's end
        tag clears the list of formatting elements to its marker."""
        while len(self.names) > i:
            name = self.names.pop()
            self.foreign.pop()
            self.at[name].pop()
            if self.special[-1] == len(self.names):
                self.special.pop()
            if self.scope[-1] == len(self.names):
                self.scope.pop()
            if self.html[-1] == len(self.names):
                self.html.pop()
            for entry in self.above.pop(len(self.names), ()):  # the copies above it close too
                if entry in self.dropped_open:
                    self.dropped_open.discard(entry)
                    self.active -= 1
                elif self._alive(entry):
                    self.waiting.add(entry)
            if name in FORMATTING and len(self.names) in self.entry_at:
                entry = self.entry_at.pop(len(self.names))
                if entry in self.live:  # closed by another tag: reopened at the next one
                    self.closed.add(entry)
                    self.waiting.add(entry)
                    self.segments[-1].closed += 1
                    self.active += 1
                    self.deepest = max(self.deepest, len(self.names) + self.active)
            if name in MARKERS and len(self.segments) > 1:
                segment = self.segments.pop()
                if name in CELLS or clear and len(self.names) == i:
                    self.active -= segment.closed  # the list is cleared to the marker
                    segment.cleared = True
                else:  # the marker stays: what follows it is still reopened (counted, no longer dropped)
                    self.segments[-1].closed += segment.closed
                    segment.into = self.segments[-1]

    def close(self, name: str, bounds: list[int], clear: bool = False) -> None:
        """Pop to the last open ``name`` unless an element of ``bounds`` lies above it."""
        i = self.last(name)
        if i >= 0 and i >= bounds[-1]:
            self.pop_to(i, clear)

    def in_select(self) -> int:
        """Position of the select the parser is in (nothing but options above it), else -1."""
        i = self.last("select")
        if i < 0:
            return -1
        for j in range(len(self.names) - 1, i, -1):
            if self.names[j] not in ("option", "optgroup"):
                return -1
        return i

    def in_foreign(self) -> bool:
        return bool(self.foreign) and bool(self.foreign[-1]) and self.names[-1] not in INTEGRATION
