"""Chat-shaped input (synthetic reasoning and agent trajectories): ``ingest.fields.chat`` renders
OpenAI ``messages`` and ShareGPT ``conversations`` turns, or a question and its answer, to one text
with roles, names and tool calls; the refusals and ledger details say so, and the ``jq`` command
they give writes the same text."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest.inputs import InputError
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl

AGENT = {
    "id": "a1",
    "source": "agent",
    "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Find the config "}, {"type": "text", "text": "parser."}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "search", "arguments": '{"query": "config"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "name": "search", "content": '{"matches": ["lib/config.js"]}'},
        {"role": "assistant", "content": "It is in lib/config.js."},
    ],
}
#: how ingest.fields.chat (and the jq command) renders AGENT
AGENT_TEXT = (
    "system: You are a coding agent.\n\nuser: Find the config parser.\n\nassistant: \n"
    '<tool_call>{"name":"search","arguments":"{\\"query\\": \\"config\\"}"}</tool_call>\n\n'
    'tool (search): {"matches": ["lib/config.js"]}\n\nassistant: It is in lib/config.js.'
)


def _texts(out) -> dict[str, str]:
    docs = read_parts(out / "docs")
    return dict(zip(docs["doc_id"], docs["text"], strict=True))


def test_agent_turns_keep_tool_calls_names_and_list_content_built_in_and_with_the_suggested_jq(tmp_path):
    """The suggested jq command dropped every tool call (`assistant: ` and nothing after it), the tool
    turn's name, and failed on content given as a list of parts."""
    f = _write_jsonl(tmp_path / "agent.jsonl", [AGENT])
    with pytest.raises(
        InputError, match=r"'messages' holds chat turns: render them to the text with ingest\.fields\.chat=messages"
    ) as err:
        _ingest([f], tmp_path / "refused")
    res = _ingest([f], tmp_path / "out", ["ingest.fields.chat=messages"])
    assert res.stats["kept"]["documents"] == 1
    assert _texts(tmp_path / "out") == {"a1": AGENT_TEXT}
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed: the suggested command is not run (the built-in rendering is tested above)")
    command = str(err.value).split("jq -c '", 1)[1].rsplit("'", 1)[0]
    out = subprocess.run(["jq", "-c", command, str(f)], capture_output=True, text=True, check=True).stdout
    (tmp_path / "text.jsonl").write_text(out)
    _ingest([tmp_path / "text.jsonl"], tmp_path / "out_jq")
    assert _texts(tmp_path / "out_jq") == {"a1": AGENT_TEXT}


def test_sharegpt_conversations_are_chat(tmp_path):
    """`from`/`value` turns were not recognised as chat: the advice was ingest.fields.text=<field>, whose
    rows were all wrong_type."""
    rows = [
        {
            "id": "s1",
            "source": "reasoning",
            "conversations": [{"from": "human", "value": "2+2?"}, {"from": "gpt", "value": "<think>2+2=4</think> 4"}],
        }
    ]
    f = _write_jsonl(tmp_path / "sg.jsonl", rows)
    with pytest.raises(InputError, match=r"'conversations' holds chat turns: .*ingest\.fields\.chat=conversations"):
        _ingest([f], tmp_path / "refused")
    _ingest([f], tmp_path / "out", ["ingest.fields.chat=conversations"])
    assert _texts(tmp_path / "out") == {"s1": "human: 2+2?\n\ngpt: <think>2+2=4</think> 4"}


def test_a_parquet_column_of_chat_turns_is_advised_and_rendered(tmp_path):
    """Parquet never got the chat hint, and ingest.fields.text=messages made every row wrong_type."""
    f = tmp_path / "chat.parquet"
    turns = [{"role": "user", "content": "2+2?", "name": None}, {"role": "assistant", "content": "4", "name": "solver"}]
    pq.write_table(pa.table({"id": ["p1"], "source": ["reasoning"], "messages": [turns]}), f)
    with pytest.raises(
        InputError,
        match=r"no text column 'text'.*'messages' holds chat turns: render them .*ingest\.fields\.chat=messages",
    ):
        _ingest([f], tmp_path / "refused")
    with pytest.raises(
        InputError,
        match=r"'messages' \(ingest\.fields\.text\) holds chat turns, not a string.*ingest\.fields\.chat=messages",
    ):
        _ingest([f], tmp_path / "refused2", ["ingest.fields.text=messages"])
    _ingest([f], tmp_path / "out", ["ingest.fields.chat=messages"])
    assert _texts(tmp_path / "out") == {"p1": "user: 2+2?\n\nassistant (solver): 4"}


def test_a_question_and_its_answer_are_joined_not_half_left_in_meta(tmp_path, caplog):
    """prompt/response records were advised ingest.fields.text=<field>: with text=response the question
    went to meta, out of the shards, unsaid."""
    f = _write_jsonl(tmp_path / "pr.jsonl", [{"id": "q1", "source": "reasoning", "prompt": "2+2?", "response": "4"}])
    with pytest.raises(
        InputError,
        match=r"'prompt' and 'response' are a question and its answer: join both .*ingest\.fields\.chat=prompt,response",
    ):
        _ingest([f], tmp_path / "refused")
    _ingest([f], tmp_path / "out", ["ingest.fields.chat=prompt,response"])
    assert _texts(tmp_path / "out") == {"q1": "user: 2+2?\n\nassistant: 4"}
    with caplog.at_level(logging.WARNING):
        _ingest([f], tmp_path / "half", ["ingest.fields.text=response"])
    said = [r.getMessage() for r in caplog.records if "out of the shards" in r.getMessage()]
    assert len(said) == 1 and "ingest.fields.text=response leaves 'prompt' in meta" in said[0], said


def test_chat_records_after_a_text_record_say_chat_in_their_ledger_detail(tmp_path):
    rows = [
        {"id": "t", "source": "reasoning", "text": "a text"},
        {"id": "m", "source": "reasoning", "messages": [{"role": "user", "content": "hi"}]},
        {"id": "s", "source": "reasoning", "conversations": [{"from": "human", "value": "hi"}]},
        {"id": "p", "source": "reasoning", "instruction": "say hi", "output": "hi"},
    ]
    _ingest([_write_jsonl(tmp_path / "mixed.jsonl", rows)], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger")
    errors = {json.loads(d)["line"]: json.loads(d)["error"] for d in ledger["detail"]}
    assert set(ledger["reason"]) == {"missing_text"}
    assert "ingest.fields.chat=messages" in errors[2] and "ingest.fields.chat=conversations" in errors[3]
    assert "ingest.fields.chat=instruction,output" in errors[4]


def test_a_text_that_is_a_json_conversation_is_said_once_with_a_count(tmp_path, caplog):
    """A conversation stored as a JSON string in `text` was kept as raw JSON without a word."""
    chat = json.dumps([{"role": "user", "content": "What is 17*23?"}, {"role": "assistant", "content": "391"}])
    rows = [{"id": f"j{i}", "source": "reasoning", "text": chat + " " * i} for i in range(3)] + [
        {"id": "plain", "source": "reasoning", "text": "[a bracketed note] and {braces}"}
    ]
    f = _write_jsonl(tmp_path / "js.jsonl", rows)
    with caplog.at_level(logging.WARNING):
        res = _ingest([f], tmp_path / "out")
    assert res.stats["extra"]["chat_as_json_text"]["documents"] == 3
    said = [r.getMessage() for r in caplog.records if "conversation written as JSON" in r.getMessage()]
    assert len(said) == 1 and "3 records of 1 file(s)" in said[0] and "ingest.fields.chat=" in said[0], said
    _ingest([f], tmp_path / "rendered", ["ingest.fields.chat=text"])
    texts = _texts(tmp_path / "rendered")
    assert (
        texts["j0"] == "user: What is 17*23?\n\nassistant: 391" and texts["plain"] == "[a bracketed note] and {braces}"
    )


def test_the_docs_example_and_jq_command_are_what_ingest_renders_and_suggests():
    """docs/ingest.md, "Feeding reasoning and agent data": its record renders to its text block, and its jq
    command is the one the refusal gives."""
    from pathlib import Path

    from curation.ingest.chat import jq_turns, render

    doc = (Path(__file__).resolve().parents[2] / "docs" / "ingest.md").read_text()
    section = doc.split("## Feeding reasoning and agent data", 1)[1].split("\n## ", 1)[0]
    record = json.loads(section.split("<<'EOF'\n", 1)[1].split("\nEOF", 1)[0])
    shown = section.split("```text\n", 1)[1].split("\n```", 1)[0]
    assert render(record["messages"]) == shown
    assert jq_turns("messages") + " agent.jsonl" in section


def _ledger(out) -> dict[str, tuple[str, str]]:
    ledger = read_parts(out / "ledger")
    return {
        i: (r, json.loads(d)["error"])
        for i, r, d in zip(ledger["doc_id"], ledger["reason"], ledger["detail"], strict=True)
    }


def test_a_conversation_with_no_content_or_a_role_that_is_not_a_string_is_a_ledger_row(tmp_path):
    """Turns with no content ({"role": "user"}, an image part, whitespace, a null content with a name) were
    kept as the documents "user: " and "user (bob): ", and a null role as ": nullrole"."""
    image = [{"type": "image_url", "image_url": {"url": "x"}}]
    rows = [
        {"id": "bare", "messages": [{"role": "user"}]},
        {"id": "image", "messages": [{"role": "user", "content": image}]},
        {"id": "space", "messages": [{"role": "user", "content": "   "}, {"role": "assistant", "content": "\n"}]},
        {"id": "named", "messages": [{"role": "user", "content": None, "name": "bob"}]},
        {"id": "none", "messages": []},
        {"id": "nullrole", "messages": [{"role": "user", "content": "q"}, {"role": None, "content": "nullrole"}]},
        {"id": "calls", "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]},
        {"id": "think", "messages": [{"role": "assistant", "content": None, "reasoning_content": "hm"}]},
    ]
    f = _write_jsonl(tmp_path / "agent.jsonl", [{"source": "agent", **r} for r in rows])
    _ingest([f], tmp_path / "out", ["ingest.fields.chat=messages"])
    sharegpt = [{"id": "numrole", "source": "agent", "conversations": [{"from": 3, "value": "x"}]}]
    _ingest([_write_jsonl(tmp_path / "sg.jsonl", sharegpt)], tmp_path / "sg", ["ingest.fields.chat=conversations"])
    assert _texts(tmp_path / "out") == {
        "calls": 'assistant: \n<tool_call>{"name":"f"}</tool_call>',
        "think": "assistant: <think>hm</think>\n",
    }
    rows = _ledger(tmp_path / "out")
    assert {i for i, (r, _) in rows.items() if r == "empty_text"} == {"bare", "image", "space", "named", "none"}
    assert (
        rows["space"][1]
        == "'messages' (ingest.fields.chat) has no content: 2 turn(s), none with text, reasoning or tool calls"
    )
    assert rows["nullrole"] == ("wrong_type", "'messages' (ingest.fields.chat) turn 2 has role null, not a string")
    assert _ledger(tmp_path / "sg")["numrole"] == (
        "wrong_type",
        "'conversations' (ingest.fields.chat) turn 1 has role 3, not a string",
    )


def test_a_null_chat_field_or_an_empty_answer_is_said_by_its_own_name(tmp_path):
    """A null response, prompt or messages field was `missing_text` "no 'text' field", naming a field the
    setting does not read; a question with an empty answer was kept as "user: Q4\\n\\nassistant: "."""
    f = tmp_path / "pairs.parquet"
    prompts, responses = ["Q1?", "Q2?", None, "Q4", "Q5"], ["A1.", None, "A3", "", " \n"]
    pq.write_table(
        pa.table(
            {
                "id": [f"p{i}" for i in range(1, 6)],
                "source": ["reasoning"] * 5,
                "prompt": prompts,
                "response": responses,
            }
        ),
        f,
    )
    _ingest([f], tmp_path / "out", ["ingest.fields.chat=prompt,response"])
    assert _texts(tmp_path / "out") == {"p1": "user: Q1?\n\nassistant: A1."}
    spec = "(ingest.fields.chat=prompt,response)"
    assert _ledger(tmp_path / "out") == {
        "p2": ("missing_text", f"'response' is null {spec}: no conversation to render"),
        "p3": ("missing_text", f"'prompt' is null {spec}: no conversation to render"),
        "p4": ("empty_text", f"'response' {spec} is empty or whitespace only: no answer"),
        "p5": ("empty_text", f"'response' {spec} is empty or whitespace only: no answer"),
    }
    rows = [
        {"id": "m", "source": "agent", "messages": None},
        {"id": "t", "source": "agent", "messages": None, "text": "prose"},
    ]
    _ingest([_write_jsonl(tmp_path / "null.jsonl", rows)], tmp_path / "null", ["ingest.fields.chat=messages"])
    assert _texts(tmp_path / "null") == {"t": "prose"}
    assert _ledger(tmp_path / "null") == {
        "m": ("missing_text", "'messages' is null (ingest.fields.chat=messages): no conversation to render")
    }
