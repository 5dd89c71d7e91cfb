"""Chat-shaped records (synthetic reasoning, agent trajectories) rendered to one text, and the advice
ingest gives for records whose text sits in chat turns or in a question/answer pair.

``ingest.fields.chat`` names a field of chat turns (OpenAI ``messages``: ``role``/``content``, with
``name``, ``tool_calls`` and ``reasoning_content``; ShareGPT ``conversations``: ``from``/``value``), or
a JSON string of such a list, or two fields joined by a comma (``prompt,response``): a record that
has it gets its conversation as its text (:func:`render`), the same text :data:`JQ_TURNS` writes.

>>> print(render([{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "Adding.",
...     "tool_calls": [{"id": "c", "type": "function", "function": {"name": "add", "arguments": "{}"}}]},
...     {"role": "tool", "name": "add", "tool_call_id": "c", "content": [{"type": "text", "text": "4"}]}]))
user: 2+2?
<BLANKLINE>
assistant: Adding.
<tool_call>{"name":"add","arguments":"{}"}</tool_call>
<BLANKLINE>
tool (add): 4
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from curation.ingest.discover import InputError
from curation.ingest.language_field import figures_head
from curation.schema import DropReason

log = logging.getLogger(__name__)

#: records of one of these pairs of string fields are a question and its answer
PAIRS = (
    ("prompt", "response"),
    ("prompt", "completion"),
    ("instruction", "output"),
    ("question", "answer"),
    ("query", "response"),
)
#: private column: the kept rows whose text is a conversation written as JSON (counted, stats.json ``extra``)
CHAT_JSON = "_chat_json"
FIGURES = "chat_as_json_text"  #: key of those figures in ``stats.json`` ``extra``
_OPENS = re.compile(r"\s*\[\s*\{")  # what a JSON list of objects starts with

#: the jq program that renders a record's turns in ``.FIELD`` as :func:`render` does (FIELD replaced)
JQ_TURNS = (
    '{id, source, text: ([.FIELD[] | (.role // .from) + (if .name then " (" + (.name | tostring) + ")" else "" end)'
    ' + ": " + (if .reasoning_content then "<think>" + .reasoning_content + "</think>\\n" else "" end)'
    ' + ((.content // .value // "") | if type == "array" then map(if type == "string" then . else .text // "" end)'
    ' | join("") elif type == "string" then . else tojson end)'
    ' + ((.tool_calls // []) | map("\\n<tool_call>" + ((.function // .) | tojson) + "</tool_call>") | join(""))]'
    ' | join("\\n\\n"))}'
)


def is_turns(value: Any) -> bool:
    """Whether ``value`` is a list of chat turns: objects that each have a ``role`` or a ``from``.

    >>> is_turns([{"from": "human", "value": "hi"}]), is_turns([{"content": "x"}]), is_turns([])
    (True, False, False)
    """
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, dict) and ("role" in t or "from" in t) for t in value)
    )


def json_turns(text: Any) -> list[dict[str, Any]] | None:
    """The turns of a text that is a conversation written as JSON (``[{"role": "user", …}]``), else None.

    >>> json_turns('[{"role": "user", "content": "hi"}] '), json_turns("[1, 2]"), json_turns("[see above]")
    ([{'role': 'user', 'content': 'hi'}], None, None)
    """
    if not isinstance(text, str) or not _OPENS.match(text[:200]):
        return None
    try:
        turns = json.loads(text)
    except ValueError:
        return None
    return turns if is_turns(turns) else None


def _content(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # parts: [{"type": "text", "text": …}]; a part without text (an image) adds nothing
        return "".join(
            p if isinstance(p, str) else str(p.get("text") or "") if isinstance(p, dict) else "" for p in value
        )
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _role(t: dict[str, Any]) -> Any:
    return t.get("role") if t.get("role") is not None else t.get("from")


def _body(t: dict[str, Any]) -> str:
    """A turn's reasoning, content and tool calls: what it says, without its role and name."""
    think = t.get("reasoning_content")
    out = f"<think>{think}</think>\n" if think else ""
    out += _content(t.get("content") if t.get("content") is not None else t.get("value"))
    for call in t.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) and call.get("function") is not None else call
        out += "\n<tool_call>" + json.dumps(fn, ensure_ascii=False, separators=(",", ":")) + "</tool_call>"
    return out


def _turn(t: dict[str, Any]) -> str:
    role, name = _role(t), t.get("name")
    return f"{role if role is not None else ''}{f' ({name})' if name else ''}: {_body(t)}"


def render(turns: Iterable[dict[str, Any]]) -> str:
    """One text of a conversation: each turn ``role (name): content``, a ``reasoning_content`` first in
    ``<think>…</think>``, each tool call after it as ``<tool_call>{function as JSON}</tool_call>`` on a
    line of its own; turns apart by a blank line. Content is a string, null (nothing) or a list of parts
    (their ``text``); ShareGPT turns give ``from`` and ``value``."""
    return "\n\n".join(_turn(t) for t in turns)


def chat_text(rec: dict[str, Any], spec: str, text_field: str = "text") -> tuple[str | None, str | None, str | None]:
    """(text, None, None) for a record that holds the conversation ``ingest.fields.chat`` names; (None,
    reason, detail) for one whose field holds something else or a turn whose role is not a string
    (``wrong_type``), or a conversation with nothing in its turns, or a question with an empty answer
    (``empty_text``); (None, None, None) for one without it (or with it null), or whose chat field is its
    text field and holds plain text (its text field is read).

    >>> chat_text({"m": [{"role": "user", "content": "hi"}]}, "m"), chat_text({"m": 3}, "m")[2][:40]
    (('user: hi', None, None), "'m' (ingest.fields.chat) is not a list o")
    >>> chat_text({"m": [{"role": "user", "content": " "}]}, "m")[1:], chat_text({"text": "prose"}, "text")
    (('empty_text', "'m' (ingest.fields.chat) has no content: 1 turn(s), none with text, reasoning or tool calls"), (None, None, None))
    """
    wrong, empty, at = DropReason.WRONG_TYPE.value, DropReason.EMPTY_TEXT.value, f"{spec!r} (ingest.fields.chat)"
    if "," in spec:
        first, second = (s.strip() for s in spec.split(",", 1))
        a, b = rec.get(first), rec.get(second)
        if a is None or b is None:
            return None, None, None
        if not isinstance(a, str) or not isinstance(b, str):
            return None, wrong, f"{first!r} and {second!r} (ingest.fields.chat) are not both strings"
        if not b.strip():  # a question without its answer teaches nothing
            return None, empty, f"{second!r} (ingest.fields.chat={spec}) is empty or whitespace only: no answer"
        return render([{"role": "user", "content": a}, {"role": "assistant", "content": b}]), None, None
    if (value := rec.get(spec)) is None:
        return None, None, None
    turns = json_turns(value) if isinstance(value, str) else value
    if turns is None and spec == text_field:
        return None, None, None
    if value != [] and not is_turns(turns):
        return (
            None,
            wrong,
            f"{at} is not a list of chat turns (objects with a 'role' or 'from'), nor a JSON string of one",
        )
    for i, t in enumerate(turns, 1):
        if not isinstance(role := _role(t), str):
            return None, wrong, f"{at} turn {i} has role {json.dumps(role, default=str)[:40]}, not a string"
    if not any(_body(t).strip() for t in turns):
        return None, empty, f"{at} has no content: {len(turns)} turn(s), none with text, reasoning or tool calls"
    return render(turns), None, None


def null_chat(rec: dict[str, Any], spec: str) -> str | None:
    """The ``missing_text`` detail of a record that has its ``ingest.fields.chat`` field (one of its two) null
    (None for a record without them, or with them all set).

    >>> null_chat({"prompt": "Q", "response": None}, "prompt,response"), null_chat({"text": "t"}, "messages")
    ("'response' is null (ingest.fields.chat=prompt,response): no conversation to render", None)
    """
    names = [s.strip() for s in spec.split(",")]
    gone = [f"{n!r} is null" if n in rec else f"no {n!r} field" for n in names if rec.get(n) is None]
    if not gone or not any(n in rec for n in names):
        return None
    return f"{', '.join(gone)} (ingest.fields.chat={spec}): no conversation to render"


def chat_field(rec: dict[str, Any]) -> str | None:
    """The first field of ``rec`` that holds chat turns, else None."""
    return next((k for k, v in rec.items() if is_turns(v)), None)


def pair_fields(names: Iterable[str], strings: dict[str, Any] | None = None) -> tuple[str, str] | None:
    """The first of :data:`PAIRS` whose two fields are among ``names`` (and strings in ``strings``)."""
    have = set(names)
    for pair in PAIRS:
        if set(pair) <= have and (strings is None or all(isinstance(strings.get(k), str) for k in pair)):
            return pair
    return None


def jq_turns(field: str) -> str:
    """The jq command that writes a file of ``field``'s conversations as text records."""
    return "jq -c '" + JQ_TURNS.replace(".FIELD[]", f".{field}[]") + "'"


def jq_pair(first: str, second: str) -> str:
    """The jq command that joins a question field and its answer field into one text record."""
    return f'jq -c \'{{id, source, text: ("user: " + .{first} + "\\n\\nassistant: " + .{second})}}\''


def chat_advice(field: str, jsonl: bool = True) -> str:
    """What to change for records whose text is the conversation in ``field`` (``jsonl``: with the jq command)."""
    jq = f", or write text records first with {jq_turns(field)}" if jsonl else ""
    return (
        f"{field!r} holds chat turns: render them to the text with ingest.fields.chat={field} (roles, names, tool "
        f'calls kept; docs/ingest.md, "Feeding reasoning and agent data"){jq}'
    )


def pair_advice(first: str, second: str, text: str | None = None, jsonl: bool = True) -> str:
    """What to change for records that are a question in ``first`` and its answer in ``second`` (``text``:
    the one of them ``ingest.fields.text`` names, if it does; ``jsonl``: with the jq command)."""
    mapped = text or second
    other = first if mapped == second else second
    jq = f" (or {jq_pair(first, second)})" if jsonl else ""
    return (
        f"{first!r} and {second!r} are a question and its answer: join both into the text with "
        f"ingest.fields.chat={first},{second}{jq}; ingest.fields.text={mapped} "
        f"{'leaves' if text else 'alone would leave'} {other!r} in meta, out of the shards"
    )


def missing_text_advice(rec: dict[str, Any]) -> str:
    """The end of a ``missing_text`` row's detail for a record whose text is in chat turns or a pair ('' for others)."""
    if (field := chat_field(rec)) is not None:
        return f"; {field!r} holds chat turns: render them with ingest.fields.chat={field}"
    if (pair := pair_fields(rec, rec)) is not None:
        return f"; {pair[0]!r} and {pair[1]!r} are a question and its answer: join them with ingest.fields.chat={pair[0]},{pair[1]}"
    return ""


def chat_json_note(stats: dict[str, Any]) -> str | None:
    """One line for an ingest that kept texts that are conversations written as JSON (None otherwise)."""
    if (head := figures_head(stats, FIGURES)) is None:
        return None
    start, _values = head
    return (
        f'{start} have a text that is a conversation written as JSON ([{{"role": …, "content": …}}]), kept as '
        "that JSON: to train on the conversation, render it with ingest.fields.chat=<that field> "
        '(docs/ingest.md, "Feeding reasoning and agent data")'
    )


def kind(value: Any) -> str:
    """``turns``, ``string`` or ``other``: what a first record's field holds (:func:`check_fields`)."""
    return "turns" if is_turns(value) else "string" if isinstance(value, str) else "other"


def column_kinds(schema: Any) -> dict[str, str]:
    """:func:`kind` of each column of a Parquet or ``datasets`` schema (a list of structs with a ``role`` or a
    ``from``: chat turns)."""
    import pyarrow as pa

    def of(t: Any) -> str:
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_struct(t.value_type):
            return "turns" if {"role", "from"} & {f.name for f in t.value_type} else "other"
        return "string" if pa.types.is_string(t) or pa.types.is_large_string(t) else "other"

    return {f.name: of(f.type) for f in schema}


def turns_fix(kinds: dict[str, str], jsonl: bool = True) -> str | None:
    """The advice for a first record (or a table: ``jsonl`` False) with no text field whose text is in chat
    turns or a question/answer pair (``kinds``: field → :func:`kind`); None when it is neither."""
    if (field := next((k for k, v in kinds.items() if v == "turns"), None)) is not None:
        return chat_advice(field, jsonl)
    if (pair := pair_fields(k for k, v in kinds.items() if v == "string")) is not None:
        return pair_advice(*pair, jsonl=jsonl)
    return None


_SAID: set[tuple[str, str]] = set()


def check_fields(where: str, kinds: dict[str, str], fields: Any, jsonl: bool = True) -> None:
    """Refuse (InputError) a text field that holds chat turns, and warn (once per setting) when the text
    field is one half of a question/answer pair whose other half goes to meta."""
    chat = [p.strip() for p in fields.chat.split(",")] if fields.chat else []
    if chat and all(p in kinds for p in chat):
        return
    if kinds.get(fields.text) == "turns":
        raise InputError(
            f"{where}: {fields.text!r} (ingest.fields.text) holds chat turns, not a string, so every record "
            f"would be a wrong_type row; {chat_advice(fields.text, jsonl)}"
        )
    if kinds.get(fields.text) != "string":
        return
    for pair in PAIRS:
        other = pair[0] if pair[1] == fields.text else pair[1] if pair[0] == fields.text else None
        if other is not None and kinds.get(other) == "string" and (fields.text, other) not in _SAID:
            _SAID.add((fields.text, other))
            log.warning("%s: %s", where, pair_advice(*pair, text=fields.text, jsonl=jsonl))
            return
