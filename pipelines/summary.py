"""The funnel table printed at the end of a run and by ``curate stats``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.schema import SOURCES


def load_run_stats(run_dir: Path) -> list[dict[str, Any]]:
    """stats.json of every current stage folder of a run, in run order (a folder left from another
    recipe or made from another upstream is left out: :func:`curation.stats.run_state.run_state`)."""
    from curation.errors import read_json_file
    from curation.stats.run_state import run_state

    if ran_alone(run_dir):
        return [read_json_file(Path(run_dir) / "stats.json")]
    return [read_json_file(child / "stats.json") for child in run_state(run_dir).current if (child / "stats.json").exists()]


def ran_alone(path: Path) -> bool:
    """A stage's folder run alone (``curate <stage> --output DIR``): its marker and stats at the top."""
    from pipelines.marker import is_stage_output, read_marker

    return (Path(path) / "stats.json").is_file() and is_stage_output(read_marker(Path(path)))


def _annotated(stats: dict[str, Any]) -> str:
    """A scoring stage removes nothing: show what it annotated (``extra.annotated``: label → documents)."""
    marks = (stats.get("extra") or {}).get("annotated") or {}
    return ("annotated " + ", ".join(f"{k}={v:,}" for k, v in sorted(marks.items()))) if marks else ""  # stats.json's order


#: ingest's reasons for a record that could not be read as a document, and what to change
UNREADABLE = {
    "unknown_source": "a record with no source or another one: give --source or an ingest.inputs entry (a record's own "
                      "source field that names no source, such as a dataset's name, then gives way to it and is kept in meta), "
                      "or a source field that is one of " + ", ".join(SOURCES),
    "missing_text": "name the text field with ingest.fields.text=<field> (chat turns or a question and its answer: "
                    "ingest.fields.chat, which the ledger detail names)",
    "wrong_type": "the ledger names the field; map a string field to it with ingest.fields.<column>=<field>",
    "malformed_json": "", "invalid_utf8": "", "nul_byte": "",
    "too_large": "the ledger names the bound each passed: raise ingest.max_chars (texts, and JSONL lines over 12 x it) or "
                 "ingest.max_html_bytes (crawled pages) to keep them",
}  # not truncated_input: a crawl has it as a matter of course (Common Crawl cuts payloads at 1 MiB), with warnings of its own


def stage_warnings(stats: dict[str, Any], ledger: Path) -> list[str]:
    """What a user should hear about a stage that finished: it kept none of its documents, or ingest
    could not read some records as documents (with the change that fixes the usual causes), or
    dropped documents whose id an earlier record had (:func:`curation.ingest.notices.duplicate_id_warning`), or
    stopped reading a crawl file before its end (:func:`curation.ingest.notices.stopped_files_warning`), or kept a
    natural-language ``language`` field in meta (:func:`curation.ingest.language_field.moved_note`), or gave records whose
    source field names no source their input's source (:func:`curation.ingest.source_field.source_note`), or left fields
    out of a ``meta`` over ``max_meta_chars`` (:func:`curation.ingest.record_meta.meta_note`), or read lines that write
    a key twice (:func:`curation.ingest.jsonl_decode.repeated_note`), or kept texts that are conversations written as JSON
    (:func:`curation.ingest.chat.chat_json_note`)."""
    from curation.ingest.chat import chat_json_note
    from curation.ingest.jsonl_decode import repeated_note
    from curation.ingest.language_field import moved_note
    from curation.ingest.notices import duplicate_id_warning, missing_text_fix, stopped_files_warning
    from curation.ingest.record_meta import meta_note
    from curation.ingest.source_field import source_note

    out = []
    name, came, by_reason = stats["stage"], stats["in"]["documents"], stats.get("dropped_by_reason", {})
    unread = {r: v["documents"] for r, v in by_reason.items() if r in UNREADABLE and name == "ingest"}
    if unread:
        fix = {**UNREADABLE, **({"missing_text": missing_text_fix(ledger, unread["missing_text"])} if "missing_text" in unread else {})}
        fixes = "; ".join(f"{r}: {fix[r]}" for r in unread if fix[r])
        out.append(f"{name}: {sum(unread.values()):,} of {came:,} records could not be read as documents "
                   f"({', '.join(f'{r}={n:,}' for r, n in unread.items())}); {ledger} has the file and line of each"
                   + (f" ({fixes})" if fixes else ""))
    if (duplicates := duplicate_id_warning(stats, ledger)) is not None:
        out.append(duplicates)
    if (stopped := stopped_files_warning(stats, ledger)) is not None:
        out.append(stopped)
    if (moved := moved_note(stats)) is not None:  # a natural-language `language` field kept in meta
        out.append(moved)
    if (given := source_note(stats)) is not None:  # a source field naming a dataset, on an input with a source
        out.append(given)
    out += [note for note in (meta_note(stats), repeated_note(stats), chat_json_note(stats)) if note is not None]  # meta fields left out; keys twice; JSON chats
    if came and not stats["kept"]["documents"]:
        top = ", ".join(f"{r}={v['documents']:,}" for r, v in sorted(by_reason.items(), key=lambda kv: -kv[1]["documents"])[:3])
        out.append(f"{name}: kept none of its {came:,} documents ({top}); {ledger} says why for each")
    return out


def _recounted(stats: dict[str, Any]) -> str:
    """Tokens the stage counted again (``recounted``: kept + dropped = in + recounted)."""
    change = (stats.get("recounted") or {}).get("tokens")
    return f"tokens re-counted {change:+,}" if change else ""


def funnel_table(stats: list[dict[str, Any]]) -> str:
    """A plain-text table: documents and tokens in / kept / dropped, top reasons, seconds.

    >>> print(funnel_table([{"stage": "s", "in": {"documents": 2, "tokens": 9}, "kept": {"documents": 1, "tokens": 5},
    ...     "dropped": {"documents": 1, "tokens": 4}, "dropped_by_reason": {"r": {"documents": 1}}, "seconds": 1.0}]))
    stage  docs in  kept  dropped  tokens in  tokens kept  seconds  top drop reasons
    s            2     1        1          9            5      1.0  r=1

    A stage that counts tokens again (``recounted``) says so: its tokens in are what came in; a stage
    that finished incomplete (``incomplete``) adds a line under the table that says which and why.
    """
    from pipelines.incomplete import incomplete_line

    header = ["stage", "docs in", "kept", "dropped", "tokens in", "tokens kept", "seconds", "top drop reasons"]
    rows = []
    for s in stats:
        reasons = sorted(s.get("dropped_by_reason", {}).items(), key=lambda kv: -kv[1]["documents"])[:3]
        rows.append([
            s["stage"],
            f"{s['in']['documents']:,}",
            f"{s['kept']['documents']:,}",
            f"{s['dropped']['documents']:,}",
            f"{s['in']['tokens']:,}",
            f"{s['kept']['tokens']:,}",
            f"{s.get('seconds', 0):.1f}",
            "; ".join(n for n in (", ".join(f"{r}={v['documents']:,}" for r, v in reasons) or _annotated(s), _recounted(s)) if n),
        ])
    line = incomplete_line(stats)
    return text_table(header, rows, left=(0, 7)) + (f"\n{line}" if line else "")


def text_table(header: list[str], rows: list[list[Any]], left: tuple[int, ...] = (0,)) -> str:
    """Columns padded to their widest cell, numbers right-aligned (the columns in ``left`` left-aligned)."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) if j in left else str(c).rjust(w) for j, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def mixture_view(run_dir: Path) -> tuple[dict[str, dict[str, Any]], Any] | None:
    """The run's manifests (phase → manifest, pre-training phases first) and the planned-against-
    replayed table of their groups; None when the mixture stage did not run or did not finish."""
    from curation.stats.mixture import manifests, mixture_replay
    from curation.stats.run import open_run

    run = open_run(run_dir)
    ms = manifests(run)
    if not ms:
        return None
    return dict(sorted(ms.items(), key=lambda kv: (kv[1]["stage"] != "pretrain", kv[0]))), mixture_replay(run)


def mixture_table(view: tuple[dict[str, dict[str, Any]], Any]) -> str:
    """Per phase: its budget line, then each group's planned and replayed tokens, shares, epochs and
    cap, then the warnings of its manifest (``curate stats RUN --mixture``)."""
    ms, table = view
    out = []
    for phase, m in ms.items():
        b = m["budget"]
        out.append(f"{phase} ({m['stage']}, {m['seq_length']:,} tokens, packing {m['packing']['mode']}): budget {b['tokens']:,}, "
                   f"planned {b['planned_tokens']:,}, replayed {b['replay_tokens']:,} ({'met' if b['met'] else 'NOT met'})")
        rows = [[r.group, f"{r.planned_tokens:,}", f"{r.replay_tokens:,}", f"{r.planned_share:.3f}", f"{r.replay_share:.3f}",
                 _num(r.epochs, ".3f"), _num(r.replay_epochs, ".3f"), _num(r.cap, ".3f"), _num(r.replay_cap, ".3f"), _num(r.off, "+.1%")]
                for r in table[table["phase"] == phase].itertuples(index=False)]
        header = ["group", "planned", "replayed", "share", "replayed share", "epochs", "replayed epochs", "cap", "replay cap", "off"]
        out.append("  " + text_table(header, rows).replace("\n", "\n  "))
        out += [f"  shortfall ({f['reason']}): {_shortfall(f)}" for f in m.get("shortfalls", [])]
        out += [f"  warning ({w['check']}): {w['message']}" for w in m.get("warnings", [])]
        out.append("")
    return "\n".join(out).rstrip()


def mixture_json(view: tuple[dict[str, dict[str, Any]], Any]) -> dict[str, Any]:
    """What :func:`mixture_table` shows, as data (``curate stats RUN --mixture --json``); a value a
    group does not have (no cap, no epochs) is null."""
    ms, table = view
    phases = {}
    for phase, m in ms.items():
        rows = table[table["phase"] == phase].drop(columns=["phase"]).astype(object)
        groups = [{k: (None if v is None or v != v else v) for k, v in row.items()} for row in rows.to_dict("records")]
        phases[phase] = {"stage": m["stage"], "seq_length": m["seq_length"], "packing": m["packing"]["mode"],
                         "budget": m["budget"], "groups": groups, "shortfalls": m.get("shortfalls", []),
                         "warnings": m.get("warnings", [])}
    return {"phases": phases}


def _shortfall(f: dict[str, Any]) -> str:
    """One manifest shortfall in words: a phase without data, or a group held at its epoch cap."""
    if f.get("reason") == "no_data" and not f.get("tokens"):
        return ("no document reached the mixture, so every budget (mixture.scale × the data) is 0 and nothing is replayed: "
                "the earlier stages' ledgers say where the documents went (curate stats RUN)")
    if f.get("reason") == "no_data":
        return (f"no document of the run is in this phase's groups: its {f['tokens']:,}-token budget is not filled "
                "(add data of its groups, or leave the phase out of mixture.phases)")
    wanted = f" (wanted {f['wanted_epochs']:g})" if f.get("wanted_epochs") is not None else ""
    return (f"{f.get('group')} is {f['tokens']:,} tokens short, held at its cap of {_num(f.get('cap'), 'g')} epochs{wanted}: "
            "add data of the group or raise its cap")


def _num(value: Any, spec: str) -> str:
    """``value`` formatted, or blank where there is none (None or NaN)."""
    return "" if value is None or value != value else format(value, spec)
