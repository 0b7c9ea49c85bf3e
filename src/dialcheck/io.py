"""Reading dialogues from user files: JSON (one dialogue or a list), JSONL (one per line) or stdin.

Accepted shapes of one dialogue:

- ``{"turns": [{"speaker": "A", "text": "..."}, ...], "knowledge": [...], "id": "..."}``
- ``{"turns": ["...", "..."]}`` or a bare ``["...", "..."]``: alternating speakers ``A`` and ``B``
- DECODE's own records (turns with ``agent_id`` instead of ``speaker``)
- chat-completion messages: ``{"messages": [{"role": "user", "content": "..."}, ...]}`` or a bare list of such
  messages; ``role`` is the speaker (a ``user`` message's ``name``, when it has one: a group chat's people),
  ``content`` the text (a string, a list of parts of which the ``text`` ones
  are joined, or ``null`` for a message that only calls a tool: an empty turn). Every message is a turn, a
  ``system`` one included, so evidence indices are indices into ``messages``. The OpenAI Responses API's items
  are read among them: ``input_text``/``output_text`` parts are text, a ``function_call`` (or another ``*_call``,
  ``reasoning``) an ``assistant`` turn without text, a ``function_call_output`` a ``tool`` turn.

A *labelled* dialogue (for ``dialcheck evaluate --data`` and ``dialcheck train --dialogues``) is a dialogue
object with ``"contradiction": true/false`` and, optionally, ``"evidence"``: the 0-based indices of the
earlier turns the last turn contradicts (with a ``"speaker"``, the turn ``dialcheck check`` checks: that
speaker's last turn with text; a ``"tau"`` is refused, as ``check`` refuses it), and ``"category"``:
``"intra_sentence"``, ``"role_confusion"`` or ``"history"`` (CDConv's categories; needed by ``dialcheck evaluate
--benchmark cdconv --data``). These are the field names of ``dialcheck score``'s verdicts.

>>> parse_dialogue(["Do you have pets?", "I have two dogs.", "Cute!", "I have no pets."]).last.speaker
'B'
>>> parse_dialogue({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}).last
Turn(speaker='assistant', text='Hello')
>>> parse_dialogue({"turns": [{"speaker": "bot", "text": 3}]})
Traceback (most recent call last):
...
dialcheck.errors.InputError: turns[0].text: expected a string, got int
"""

from __future__ import annotations

import gzip
import json
import numbers
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from .errors import InputError
from .language import dialogue_language, turn_field
from .schema import Dialogue, Example, KnowledgeBase, Turn

__all__ = [
    "ParsedRecord",
    "as_dialogues",
    "chat_role",
    "check_id",
    "counted",
    "decode_utf8",
    "ends_off_assistant",
    "example_record",
    "input_lines",
    "input_name",
    "is_blank",
    "json_type",
    "json_type_name",
    "json_value",
    "labelled_source_name",
    "named_some",
    "open_input",
    "other_speaker_evidence",
    "other_speaker_note",
    "output_name",
    "parse_checked",
    "parse_dialogue",
    "parse_example",
    "parse_knowledge",
    "plural_of",
    "read_dialogues",
    "read_examples",
    "read_input",
    "record_id",
    "refuse_thresholds",
    "reply_speaker",
    "require_file",
    "speaker_text",
    "spoken_by",
    "upto_speaker",
    "user_names",
    "where_named",
    "write_jsonl",
]

_ID_KEYS = ("id", "dialogue_id", "conversation_id", "record_id")


class FirstLines:
    """The line (or place) each record id is first given on, to refuse an id given again: two records of one id
    would be stored, resumed, labelled or judged as one. ``advice`` ends the message.

    >>> once = FirstLines("each record needs its own")
    >>> once.problem("a", 1), once.problem("b", 2)
    (None, None)
    >>> once.problem("a", 3)
    "id: 'a' is the id of line 1 too (each record needs its own)"

    ``key`` names the field the record gave its id in (see :func:`id_key`), as a user wrote it:

    >>> once.problem("b", 4, key="dialogue_id")
    "dialogue_id: 'b' is the id of line 2 too (each record needs its own)"
    """

    def __init__(self, advice: str) -> None:
        self.advice = advice
        self.first: dict[Any, int | str] = {}

    def problem(self, rid: Any, where: int | str, key: str | None = "id") -> str | None:
        """None, having recorded ``where`` (a line number, or a place such as ``"record 3"``), when ``rid`` is
        new; else the message naming where it was first given, under the record's id field ``key`` (``"id"``
        when None)."""
        first = self.first.setdefault(rid, where)
        if first == where:
            return None
        place = f"line {first}" if isinstance(first, int) else first
        return f"{key or 'id'}: {rid!r} is the id of {place} too ({self.advice})"

    def check(self, rid: Any, where: int | str, key: str | None = "id") -> Any:
        """``rid``, or an :class:`InputError` with :meth:`problem`'s message."""
        message = self.problem(rid, where, key)
        if message is not None:
            raise InputError(message)
        return rid


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: white space and invisible format characters only (a zero-width space, joiner
    or byte-order mark, a soft hyphen: Unicode category Cf). Such a last turn or candidate says nothing to check, and
    scored it was a reply that contradicts nothing (a bot's ``"\u200b"`` ranked above any real reply).

    >>> is_blank(" \u200b\u200d\ufeff"), is_blank("\u00a0"), is_blank("ok\u200b"), is_blank("🐶")
    (True, True, False, False)
    """
    if not text.strip() or text.isascii():
        return not text.strip()
    return not any(not c.isspace() and unicodedata.category(c) != "Cf" for c in text)


CATEGORIES = ("intra_sentence", "role_confusion", "history")  # CDConv's, as in dialcheck.datasets.cdconv


_JSON_TYPES = {bool: "boolean", str: "string", dict: "object", list: "list", int: "int", float: "float"}


def json_type(v: Any) -> str:
    """The JSON name of ``v``'s type, for error messages about a value read from user input (``null``,
    ``string``, ``object``, ``list``, ``boolean``, ``int``, ``float``), never Python's (``NoneType``, ``str``,
    ``dict``).

    >>> json_type(None), json_type("a"), json_type({}), json_type([]), json_type(True), json_type(2), json_type(2.5)
    ('null', 'string', 'object', 'list', 'boolean', 'int', 'float')
    """
    return "null" if v is None else _JSON_TYPES.get(type(v), type(v).__name__)


_type = json_type  # the name it had before it was public


def json_value(v: Any) -> str:
    """What was got, for an error message about a value read from user input that is not one of those expected:
    a string quoted and a number as written, anything else by its :func:`json_type` (never Python's ``True``,
    ``None`` or ``[1]``).

    >>> json_value("yes"), json_value(4), json_value(1.0), json_value(True), json_value(None), json_value([1])
    ("'yes'", '4', '1.0', 'boolean', 'null', 'list')
    """
    if isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return repr(v)
    return json_type(v)


def json_type_name(typ: type | tuple[type, ...]) -> str:
    """The JSON name of a Python type, or of each of a tuple of them joined by "or", for the *expected* half
    of an error message (:func:`json_type` names what was got).

    >>> json_type_name(str), json_type_name((int, str)), json_type_name(dict), json_type_name(type(None))
    ('string', 'int or string', 'object', 'null')
    """
    names = {**_JSON_TYPES, type(None): "null"}
    return " or ".join(names.get(t, t.__name__) for t in (typ if isinstance(typ, tuple) else (typ,)))


def check_id(value: Any, field: str = "id") -> str:
    """A record's id as a string: a JSON string or whole number (``7`` and ``7.0``, as a table of ids with a
    gap writes them, are ``"7"``); anything else is an :class:`InputError` naming ``field`` (an id is never
    silently turned into another).

    >>> check_id(7), check_id(7.0), check_id("d1")
    ('7', '7', 'd1')
    >>> check_id(2.5)
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: id: expected a string or a whole number, got float
    """
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{field}: expected a string or a whole number, got {json_type(value)}")
    return str(value)


def id_key(obj: Any) -> str | None:
    """The field a dialogue record gives its id in: its first of ``_ID_KEYS`` that is present and not null, or
    None (its value is not checked: see :func:`record_id`).

    >>> id_key({"id": None, "dialogue_id": 12}), id_key({"turns": []}), id_key(["Hi"])
    ('dialogue_id', None, None)
    """
    if not isinstance(obj, dict):
        return None
    return next((k for k in _ID_KEYS if obj.get(k) is not None), None)


def record_id(obj: Any) -> str | None:
    """The id of a dialogue record: its :func:`id_key` field (see :func:`check_id`), or None.

    >>> record_id({"dialogue_id": 12, "turns": []}), record_id({"id": None}), record_id(["Hi"])
    ('12', None, None)
    """
    key = id_key(obj)
    return None if key is None else check_id(obj[key], key)


def _raw_id(obj: Any) -> str | None:
    """:func:`record_id`, or None when the id itself is bad (for naming a record in error reports)."""
    try:
        return record_id(obj)
    except InputError:
        return None


def decode_utf8(data: bytes, source: str | None = None, line: int | None = None) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped); bytes that are not UTF-8 raise an
    :class:`InputError` naming the line (counted in ``data`` unless ``line`` is given) and column.

    >>> decode_utf8(b'["caf\\xe9"]', "chat.json")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: chat.json, line 1: not UTF-8 text: byte 0xe9 at column 6 (save the file as UTF-8)
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        if line is None:
            line = data.count(b"\n", 0, e.start) + 1
        msg = f"not UTF-8 text: byte 0x{data[e.start]:02x} at column {e.start - start + 1} (save the file as UTF-8)"
        raise InputError(msg, source, line) from None


def require_file(path: str | Path, name: str | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is an existing file, else an :class:`InputError` saying
    whether it is missing or a directory.

    >>> require_file(".")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: .: is a directory, expected a file
    """
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory, expected a file", name or str(path))
    if not p.is_file():
        raise InputError("no such file", name or str(path))
    return p


def open_input(path: str | Path, name: str | None = None) -> BinaryIO:
    """A binary stream of the input file ``path``; a name ending in ``.gz`` is decompressed as it is read
    (chat logs are often stored gzipped). Read it with :func:`input_lines` or :func:`read_input`.

    >>> import gzip, tempfile
    >>> path = tempfile.mkdtemp() + "/log.jsonl.gz"
    >>> with gzip.open(path, "wt") as f:
    ...     _ = f.write('["Hi.", "Hello!"]\\n')
    >>> list(input_lines(open_input(path), path))
    [b'["Hi.", "Hello!"]\\n']
    """
    p = require_file(path, name)
    if p.name.lower().endswith(".gz"):
        return gzip.open(p, "rb")  # type: ignore[return-value]
    return p.open("rb")


def input_lines(stream: BinaryIO, name: str) -> Iterator[bytes]:
    """The lines of ``stream``, closed at the end; a damaged ``.gz`` is an :class:`InputError` naming the last
    line read (the lines before it are yielded first)."""
    n = 0
    with stream:
        try:
            for n, line in enumerate(stream, start=1):  # noqa: B007
                yield line
        except (OSError, EOFError) as e:  # gzip.BadGzipFile, zlib.error, a truncated stream
            raise InputError(f"cannot decompress the file after line {n} ({e})", name, n + 1) from None


def _stdin() -> Any:
    """``sys.stdin``, or an :class:`InputError` when there is none to read: started with standard input closed
    (``dialcheck score - out.jsonl <&-``) Python sets it to None, and reading it was a traceback."""
    stdin = sys.stdin
    if stdin is None or getattr(stdin, "closed", False):
        raise InputError("standard input is closed", input_name("-"))
    return stdin


def stdin_lines() -> Iterator[bytes]:
    """Standard input's lines as bytes (so that non-UTF-8 input is named, not mangled), read as they come: a pipe
    that is still being written is streamed, not read whole first. A text stream with no binary buffer gives its
    lines encoded back. Standard input closed is an :class:`InputError`, raised here, before any line is read.

    >>> import sys
    >>> sys.stdin, saved = None, sys.stdin
    >>> try:
    ...     stdin_lines()
    ... finally:
    ...     sys.stdin = saved
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: <stdin>: standard input is closed
    """
    stdin = _stdin()
    buffer = getattr(stdin, "buffer", None)
    if buffer is not None:
        return iter(buffer)
    return (line.encode("utf-8", "surrogateescape") for line in stdin)


def read_stdin() -> bytes:
    """All of standard input's bytes, read at once (a JSON document): :func:`stdin_lines`'s stream and check."""
    stdin = _stdin()
    buffer = getattr(stdin, "buffer", None)
    if buffer is not None:
        return buffer.read()
    return stdin.read().encode("utf-8", "surrogateescape")


def read_input(path: str | Path, name: str | None = None) -> bytes:
    """The whole input file ``path`` as bytes (``.gz`` decompressed)."""
    return b"".join(input_lines(open_input(path, name), name or str(path)))


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write one JSON object per line to ``path`` ("-": standard output) and return how many were written.

    A file is written under a temporary name and renamed at the end, so an interrupted run never leaves half
    a file behind; its folder is created; a symbolic link stays one (its target is replaced). What is not a
    regular file, ``/dev/null`` or a named pipe, is written in place: a file renamed over it replaced the device.
    Non-ASCII text is kept as is.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "out" / "rows.jsonl"
    >>> write_jsonl(path, [{"text": "我养了猫"}, {"n": 2}]), path.read_text(encoding="utf-8")
    (2, '{"text": "我养了猫"}\\n{"n": 2}\\n')
    >>> write_jsonl("-", [{"n": 1}])
    {"n": 1}
    1
    """
    n = 0
    if str(path) == "-":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
        sys.stdout.flush()
        return n
    p = Path(path)
    in_place = p.exists() and not p.is_file()  # /dev/null, /dev/stdout on a pipe, a FIFO
    if p.is_symlink() and not in_place:
        p = p.resolve()
    if not in_place:
        p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p if in_place else p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    if not in_place:
        tmp.replace(p)
    return n


def json_error(e: json.JSONDecodeError) -> str:
    """The message of a JSON error with its column, worded once ("starting at column 5", not "at at").

    >>> try:
    ...     json.loads('{"a": "b')
    ... except json.JSONDecodeError as e:
    ...     print(json_error(e))
    invalid JSON (Unterminated string starting at column 7)
    """
    joint = " " if e.msg.endswith(" at") else " at "
    return f"invalid JSON ({e.msg}{joint}column {e.colno})"


def _check_text(text: str, field: str) -> str:
    """``text`` unless it holds a lone surrogate (a ``\\udce9`` escape in JSON), which no model can read."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(f"{field}: not valid Unicode text (a lone surrogate \\u{ord(text[e.start]):04x})") from None
    return text


def parse_knowledge(value: Any, field: str = "knowledge") -> KnowledgeBase:
    """A knowledge table: a list of flat records (column -> value). Numbers and booleans become strings.

    >>> parse_knowledge([{"poi": "Stanford Express Care", "distance": 5}]).rows[0]["distance"]
    '5'
    """
    if not isinstance(value, list):
        raise InputError(f"{field}: expected a list of records, got {json_type(value)}")
    rows = []
    for i, row in enumerate(value):
        if not isinstance(row, dict):
            raise InputError(f"{field}[{i}]: expected an object of column -> value, got {json_type(row)}")
        clean: dict[str, str] = {}
        for k, v in row.items():
            if isinstance(v, bool):
                v = "yes" if v else "no"
            if isinstance(v, (int, float)):
                v = str(v)
            if v is None:
                v = ""
            if not isinstance(v, str):
                raise InputError(f"{field}[{i}].{k}: expected a flat value (string or number), got {json_type(v)}")
            clean[str(k)] = v
        rows.append(clean)
    return KnowledgeBase(tuple(rows))


#: The content parts that hold a message's words: chat completions' ``text``, the Responses API's ``input_text`` (the
#: user's) and ``output_text`` (the assistant's). Others (an image, audio, a file) say nothing to contradict.
TEXT_PARTS = ("text", "input_text", "output_text")


def _content_text(content: Any, field: str) -> str:
    """The text of a chat message's ``content``: a string, ``null`` (a tool call: empty) or a list of parts, whose
    :data:`TEXT_PARTS` are joined.

    >>> _content_text([{"type": "output_text", "text": "Yes."}, {"type": "image_url", "image_url": {}}], "content")
    'Yes.'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InputError(f"{field}: expected a string, a list of parts or null, got {json_type(content)}")
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if part.get("type", "text") in TEXT_PARTS:
                if not isinstance(part.get("text"), str):
                    raise InputError(f"{field}[{j}].text: expected a string, got {json_type(part.get('text'))}")
                texts.append(part["text"])
        else:
            raise InputError(
                f"{field}[{j}]: expected an object with 'type' and 'text' or a string, got {json_type(part)}"
            )
    return " ".join(s.strip() for s in texts if s.strip())


def _parse_turn(t: Any, i: int, default_speaker: str, key: str = "turns", alternate: bool = True) -> Turn:
    if isinstance(t, Turn):  # a caller in Python: checked as the object it stands for
        t = {"speaker": t.speaker, "text": t.text}
    if isinstance(t, str):
        if not alternate:
            raise InputError(
                f'{key}[{i}]: a bare string among turns that name their speaker: give {{"speaker": ..., "text": ...}}'
            )
        return Turn(default_speaker, _check_text(t, f"{key}[{i}]"))
    if not isinstance(t, dict):
        raise InputError(
            f"{key}[{i}]: expected an object with 'speaker' and 'text' (or 'role' and 'content') or a string, "
            f"got {json_type(t)}"
            + (" (a list of dialogues? one dialogue was expected here)" if isinstance(t, (list, tuple)) else "")
        )
    item = _responses_tool_item(t, f"{key}[{i}]")
    if item is not None:
        return item
    if "text" in t:
        text = t["text"]
        if not isinstance(text, str):
            raise InputError(f"{key}[{i}].text: expected a string, got {json_type(text)}")
    elif "content" in t:  # chat-completion messages
        text = _content_text(t["content"], f"{key}[{i}].content")
    elif "turns" in t or "messages" in t:  # a list of dialogues where one dialogue was expected
        inner = "turns" if "turns" in t else "messages"
        raise InputError(
            f'{key}[{i}]: a whole dialogue (it has "{inner}"), not a turn: one dialogue was expected, got a list of '
            "dialogues (JSON Lines hold one dialogue per line; a JSON document may be a list of them)"
        )
    else:
        name = "content" if key == "messages" else "text"
        keys = _keys(t)
        raise InputError(f"{key}[{i}].{name}: missing" + (f" (it has: {keys})" if keys else ""))
    _check_text(text, f"{key}[{i}].{'text' if 'text' in t else 'content'}")
    field = next((f for f in _SPEAKER_KEYS if f in t), None)
    if field is None:
        if not alternate:
            name = "role" if key == "messages" else "speaker"
            raise InputError(
                f"{key}[{i}].{name}: missing (other turns name their speaker; only a dialogue whose turns name none "
                "alternates A/B)"
            )
        return Turn(default_speaker, text)
    speaker = t[field]
    # chat logs' roles are names; a speaker may be a number, as DECODE's agent_id is (1 is the speaker "1")
    name = speaker if field == "role" and isinstance(speaker, str) else speaker_text(speaker)
    if name is None or (field == "role" and not isinstance(speaker, str)):
        kinds = "a string" if field == "role" else "a string or a whole number"
        raise InputError(f"{key}[{i}].{field}: expected {kinds}, got {json_type(speaker)}")
    if not name.strip():
        raise InputError(f"{key}[{i}].{field}: {blank_speaker(name)} (name who said the turn)")
    if field == "role" and name == "user" and t.get("name") is not None:
        return Turn(_user_name(t["name"], f"{key}[{i}].name"), text)
    return Turn(name, text)


#: The chat-completion roles a user's ``name`` may not be: such a name would merge that user's messages with the
#: assistant's, the system prompt's or a tool's. ``"user"`` is allowed (the role's own speaker).
CHAT_ROLES = ("assistant", "system", "developer", "tool", "function", "ipython")


def _user_name(value: Any, field: str) -> str:
    """A ``user`` message's ``name`` as its speaker (a group chat's people told apart), else an :class:`InputError`
    naming ``field``. A whole number is its digits, as wherever a record names a speaker (:func:`speaker_text`).

    >>> _user_name("alice", "messages[0].name"), _user_name(5, "messages[0].name")
    ('alice', '5')
    >>> _user_name("assistant", "messages[2].name")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: messages[2].name: 'assistant' is a chat role, not a user's name: it would make this \
user's messages the assistant's (rename the user, or leave name out)
    """
    name = speaker_text(value)
    if name is None:  # a fraction, a boolean, a list: no one's name
        raise InputError(f"{field}: expected a string or a whole number (the user's name), got {json_type(value)}")
    value = name
    if not value.strip():
        raise InputError(f"{field}: {blank_speaker(value)} (name the user, or leave name out)")
    if value in CHAT_ROLES:
        whose = "the assistant's" if value == "assistant" else f"{value} messages"
        raise InputError(
            f"{field}: {value!r} is a chat role, not a user's name: it would make this user's messages {whose} "
            "(rename the user, or leave name out)"
        )
    return value


def _responses_tool_kind(t: Any) -> str | None:
    """``"call"`` for an OpenAI Responses API item in which the assistant calls a tool or reasons (``function_call``,
    ``web_search_call``, ``reasoning``, ...), ``"output"`` for a tool's answer (``function_call_output``, ...),
    ``"reference"`` for an ``item_reference`` (an item stored by the API, named by its id), else None (a message, a
    turn). These items name no ``role``: the type says who made them. It is the type that decides, whatever
    ``content`` holds: a reasoning item may carry one (``[{"type": "reasoning_text", ...}]``, or ``null`` as the
    Python SDK dumps it), which is the assistant's reasoning, not a message.

    >>> _responses_tool_kind({"type": "reasoning", "summary": [], "content": None})
    'call'
    >>> _responses_tool_kind({"type": "message", "role": "assistant", "content": "Hi."}) is None
    True
    """
    if not isinstance(t, dict) or any(f in t for f in _SPEAKER_KEYS) or "text" in t:
        return None
    kind = t.get("type")
    if not isinstance(kind, str):
        return None
    if kind.endswith("_call_output"):
        return "output"
    if kind.endswith("_call") or kind == "reasoning":
        return "call"
    if kind == "item_reference":
        return "reference"
    return None


def _responses_tool_item(t: Any, field: str) -> Turn | None:
    """A Responses API tool item as the turn its Chat Completions form is (None for anything else): a call is an
    ``assistant`` turn without text, as a message with ``tool_calls`` and ``content: null``; its output a ``tool``
    turn whose text is the ``output`` (a string or a list of parts; a screenshot or other object says nothing), as a
    ``role: tool`` message's ``content``. So a log that mixes them with messages is read, and evidence indices still
    count its items.

    >>> _responses_tool_item({"type": "function_call", "call_id": "c1", "name": "stock", "arguments": "{}"}, "x")
    Turn(speaker='assistant', text='')
    >>> _responses_tool_item({"type": "function_call_output", "call_id": "c1", "output": '{"in_stock": 0}'}, "x")
    Turn(speaker='tool', text='{"in_stock": 0}')
    """
    kind = _responses_tool_kind(t)
    if kind is None:
        return None
    if kind == "reference":
        ref = t.get("id")
        named = f" {json.dumps(ref, ensure_ascii=False)}" if isinstance(ref, str) else ""
        raise InputError(
            f"{field}: an item_reference, a reference to the item{named} stored by the API, whose text the log does "
            "not hold: include the item itself"
        )
    if kind == "call":
        return Turn("assistant", "")
    output = t.get("output")
    text = _content_text(output, f"{field}.output") if isinstance(output, (str, list)) else ""
    return Turn("tool", _check_text(text, f"{field}.output"))


def speaker_text(value: Any) -> str | None:
    """A speaker named in user input as its name: a string as it is, a whole number as its digits (DECODE's
    ``agent_id`` 1, a ``"speaker": 1``, and ``1.0`` as a table column with a gap writes it, are all the speaker
    ``"1"``, whom ``--speaker 1`` names); None for anything else (a boolean, a fraction, null, a list).

    >>> speaker_text("bot"), speaker_text(1), speaker_text(1.0), speaker_text(1.5), speaker_text(True)
    ('bot', '1', '1', None, None)
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return str(int(value))
    return None


_SPEAKER_KEYS = ("speaker", "agent_id", "role")  # ours, DECODE's, chat-completion logs'


def _keys(obj: dict[str, Any], shown: int = 6) -> str:
    """The keys of an object that lacks the one looked for, for the message ("" for an empty object).

    >>> _keys({"speaker": "A", "utterance": "Hi"}), _keys({})
    ('speaker, utterance', '')
    """
    keys = [k if k.isidentifier() else json.dumps(k, ensure_ascii=False) for k in map(str, obj)]
    return ", ".join(keys[:shown]) + (", ..." if len(keys) > shown else "")


def _names_speakers(turns_raw: list[Any]) -> bool:
    """Whether any turn of a dialogue names its speaker (then every turn must: strings and unnamed objects
    alternate A/B only in a dialogue whose turns name none)."""
    return any(
        isinstance(t, Turn) or (isinstance(t, dict) and any(f in t for f in _SPEAKER_KEYS)) or _responses_tool_kind(t)
        for t in turns_raw
    )


def _is_tool_call(t: Any) -> bool:
    """Whether ``t`` is a chat log's tool call: an ``assistant`` message carrying ``tool_calls`` (or the older
    ``function_call``), or a Responses API call item (``function_call``, ``reasoning``, ...). Marked in a dialogue's
    ``meta["tool_calls"]`` (their indices), so that an assistant's message without text that calls nothing, an empty
    reply, is not taken for one.

    >>> _is_tool_call({"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]})
    True
    >>> _is_tool_call({"role": "assistant", "content": ""}), _is_tool_call({"type": "function_call", "call_id": "c1"})
    (False, True)
    """
    if _responses_tool_kind(t) == "call":
        return True
    return (
        isinstance(t, dict)
        and t.get("role") == "assistant"
        and "speaker" not in t
        and bool(t.get("tool_calls") or t.get("function_call"))
    )


def _named_user(t: Any) -> bool:
    """Whether ``t`` is a chat-completion ``user`` message with a ``name`` (read as its speaker)."""
    return (
        isinstance(t, dict)
        and "speaker" not in t
        and "agent_id" not in t
        and t.get("role") == "user"
        and (t.get("name") is not None)
    )


def user_names(d: Dialogue) -> tuple[str, ...]:
    """The speakers of ``d`` that are a chat log's users named by their messages' ``name`` (``{"role": "user",
    "name": "alice", ...}`` is said by ``alice``): users as the role ``user`` is, each held to their own words.

    >>> user_names(parse_dialogue([{"role": "user", "name": "bo", "content": "Hi"}, {"role": "user", "content": "Yo"}]))
    ('bo',)
    """
    return tuple(d.meta.get("user_names", ()))


def chat_role(d: Dialogue, i: int) -> str:
    """The chat role of turn ``i`` of ``d``: its speaker, or ``"user"`` for a user named by ``name``
    (:func:`user_names`)."""
    speaker = d.turns[i].speaker
    return "user" if speaker in user_names(d) else speaker


def parse_dialogue(obj: Any, allow_empty_last: bool = False) -> Dialogue:
    """One dialogue from its JSON value; raises :class:`InputError` naming the bad field. Its id, the first
    of ``id``, ``dialogue_id``, ``conversation_id`` and ``record_id`` that is not null, must be a string or a
    whole number (:func:`check_id`).

    The last turn must have text (it is the one checked) unless ``allow_empty_last``: a caller that checks
    another turn (``--speaker``) accepts a log ending with, e.g., an assistant's tool call (``content: null``).

    A dialogue read from chat-completion messages has ``meta["turns_key"] == "messages"``, so that a check made after
    reading names a turn as the file does (``messages[1].content``, :func:`~dialcheck.language.turn_field`); any
    other has ``"turns"``, so that an error tells a record's writer what to write, not what to build in Python.
    """
    meta: dict[str, Any] = {}
    knowledge = None
    tkey = "turns"
    if isinstance(obj, (list, tuple)):  # a tuple: a Python caller's sequence of turns
        turns_raw = list(obj)
        if _is_message_list(turns_raw):
            tkey = "messages"
    elif isinstance(obj, dict):
        if "turns" not in obj and "messages" in obj:
            tkey = "messages"
        elif "turns" not in obj:
            keys = _keys(obj)
            raise InputError(
                f"turns: missing ({f'it has: {keys}; ' if keys else ''}a dialogue is "
                '{"turns": [...]}, {"messages": [...]} or a list)'
            )
        turns_raw = obj[tkey]
        if not isinstance(turns_raw, list):
            raise InputError(f"{tkey}: expected a list, got {json_type(turns_raw)}")
        rid = record_id(obj)
        if rid is not None:
            meta["id"] = rid
        if obj.get("knowledge") is not None:
            knowledge = parse_knowledge(obj["knowledge"])
    else:
        raise InputError(f"expected a dialogue object or a list of strings, got {json_type(obj)}")
    if not turns_raw:
        raise InputError(f"{tkey}: the dialogue is empty (at least one turn is needed)")
    meta["turns_key"] = tkey  # read from JSON (a file's record, or a Python caller's dict or list), not built
    alternate = not _names_speakers(turns_raw)
    turns = tuple(_parse_turn(t, i, "AB"[i % 2], tkey, alternate) for i, t in enumerate(turns_raw))
    calls = tuple(i for i, t in enumerate(turns_raw) if _is_tool_call(t))
    if calls:  # the assistant's tool calls (language.is_tool_turn): not its replies, even when empty
        meta["tool_calls"] = calls
    users = {turn.speaker for t, turn in zip(turns_raw, turns, strict=True) if _named_user(t)}
    if users:  # a group chat's people: each a speaker of their own, each a user (user_names)
        meta["user_names"] = tuple(sorted(users))
    if not allow_empty_last and is_blank(turns[-1].text):
        hint = ""
        if tkey == "messages":
            hint = ' (a tool call? --speaker assistant, or "speaker": "assistant" in the dialogue object, checks'
            hint += " the last reply with text)"
        field = turn_field(Dialogue(turns, meta=meta), len(turns) - 1)
        raise InputError(f"{field}: the last turn is empty: there is nothing to check{hint}")
    return Dialogue(turns, knowledge=knowledge, meta=meta)


def check_batch_size(value: Any, field: str = "batch_size") -> int:
    """``value`` as a batch size: a positive whole number, else an :class:`InputError` naming ``field``.

    >>> check_batch_size(8)
    8
    >>> check_batch_size(-1)
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: batch_size: expected a positive whole number, got -1
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        shown = json_type(value) if value is None or isinstance(value, (str, bool, list, dict)) else repr(value)
        raise InputError(f"{field}: expected a positive whole number, got {shown}")
    return int(value)


def check_reply_speaker(value: Any) -> str | None:
    """The one speaker a ``rank``/``rerank`` reply is said by (a non-empty name; a whole number names the speaker of
    its digits, as :func:`speaker_text` reads it), None for the default; anything else is an :class:`InputError`.

    >>> check_reply_speaker("bot"), check_reply_speaker(None), check_reply_speaker(1)
    ('bot', None, '1')
    >>> check_reply_speaker(" ")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: speaker: ' ' is blank (name who says the reply, or leave speaker out: the context's \
next speaker says it)
    """
    if value is None:
        return None
    name = speaker_text(value)  # a whole number is its digits, as a turn's speaker is read
    if name is None:
        raise InputError(f"speaker: expected a speaker name (a non-empty string), got {json_type(value)}")
    if not name.strip():  # a string: what is wrong is its text, not its type
        raise InputError(
            f"speaker: {blank_speaker(name)} (name who says the reply, or leave speaker out: the context's next "
            "speaker says it)"
        )
    return name


def blank_speaker(name: str) -> str:
    """What is wrong with a speaker name that names no one, worded alike by :func:`check_speakers`,
    :func:`check_reply_speaker`, a turn's speaker (:func:`parse_dialogue`, :func:`check_dialogue`) and ``--speaker``:
    ``empty`` for ``""``, else the name shown and ``is blank`` (white space only).

    >>> print(blank_speaker(""), "/", blank_speaker(" "))
    empty / ' ' is blank
    """
    return f"{name!r} is blank" if name else "empty"


def reply_speaker(context: Dialogue) -> str:
    """Who speaks next after ``context``: the speaker of the second-to-last turn (alternating turns), leaving out
    a ``system`` message (a chat's instructions, never the replying speaker); after a lone ``user`` turn (or only
    a system message), ``assistant``; else the other of A/B. A context that ends with a turn without text (an
    assistant's tool call, ``content: null``) is continued by that turn's speaker.

    >>> reply_speaker(Dialogue.from_texts(["I have a cat.", "Nice."]))
    'A'
    >>> chat = as_context([{"role": "system", "content": "You are Max."}, {"role": "user", "content": "Hi!"}])
    >>> reply_speaker(chat)  # not "system", the second-to-last turn's speaker
    'assistant'
    >>> reply_speaker(as_context([{"role": "user", "content": "Pets?"}, {"role": "assistant", "content": None}]))
    'assistant'
    """
    if context.turns and is_blank(context.turns[-1].text) and context.turns[-1].speaker != "system":
        return context.turns[-1].speaker  # a tool call: the reply with text that follows is its speaker's
    said = [t.speaker for t in context.turns if t.speaker != "system"]
    if len(said) >= 2:
        return said[-2]
    roles = [chat_role(context, i) for i, t in enumerate(context.turns) if t.speaker != "system"]
    if roles == ["user"] or (not said and context.turns):  # a named user's message too
        return "assistant"
    return "A" if said == ["B"] else "B"


def check_speakers(value: Any, field: str = "speaker") -> list[str] | None:
    """The speaker names a ``speaker`` argument gives (a name or a non-empty list of names), None for None; a whole
    number names the speaker of its digits (:func:`speaker_text`: ``1`` is ``"1"``, DECODE's ``agent_id`` 1);
    anything else is an :class:`InputError` naming ``field``.

    >>> check_speakers("assistant"), check_speakers(["bot", "assistant"]), check_speakers(None), check_speakers(1)
    (['assistant'], ['bot', 'assistant'], None, ['1'])
    """
    if value is None:
        return None
    names = [value] if isinstance(value, str) or speaker_text(value) is not None else value
    if not isinstance(names, (list, tuple)):
        raise InputError(f"{field}: expected a speaker name or a list of names, got {json_type(value)}")
    if not names:
        # in words for JSON (null) and Python (None) alike: the request, the record or the argument leaves it out
        raise InputError(
            f"{field}: an empty list names no speaker (name one, or leave {field} out to check the last turn)"
        )
    out = []
    for i, raw in enumerate(names):
        where = field if names is not value else f"{field}[{i}]"
        name = speaker_text(raw)  # 1 is the speaker "1", as DECODE's agent_id 1 is read
        if name is None:
            raise InputError(f"{where}: expected a speaker name (a string or a whole number), got {json_type(raw)}")
        if not name.strip():
            raise InputError(f"{where}: {blank_speaker(name)} (name the speaker whose turn is checked)")
        out.append(name)
    return out


THRESHOLD_KEYS = ("tau", "eta_e", "threshold")  # a dialogue (or request) cannot set them: refused, never ignored

# Where a caller's thresholds are set, for the error about a threshold in a dialogue object (HTTP has its own).
THRESHOLDS_HINT = (
    "the thresholds are the model's (`--tau` / `--eta-e` on the command line; a detector's `tau` and `eta_e` in Python)"
)


def refuse_thresholds(obj: Any, thresholds: str = THRESHOLDS_HINT, compare: str = "`score` and `pair_scores`") -> None:
    """An :class:`InputError` naming the first of ``"tau"``, ``"eta_e"`` and ``"threshold"`` that a dialogue object
    ``obj`` holds (``thresholds``: where they are set; ``compare``: the verdict fields to compare with one's own); a
    dialogue cannot set them, and one silently scored at the model's thresholds misleads.

    >>> refuse_thresholds({"turns": ["Hi"], "tau": 0.3}, "the thresholds are the model's", "`score`")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: tau: not a dialogue field; the thresholds are the model's, or compare each verdict's \
`score` with your own
    """
    if isinstance(obj, dict):
        for key in THRESHOLD_KEYS:
            if key in obj:
                raise InputError(
                    f"{key}: not a dialogue field; {thresholds}, or compare each verdict's {compare} with your own"
                )


def parse_checked(
    obj: Any,
    speakers: list[str] | None = None,
    thresholds: str = THRESHOLDS_HINT,
    compare: str = "`score` and `pair_scores`",
) -> tuple[Dialogue, list[str] | None]:
    """One dialogue to check from its JSON value, and the speakers whose last turn with text is checked (None: its
    last turn): a dialogue object's own ``"speaker"`` (a name or a list of names, as :func:`check_speakers` reads
    it; ``null`` is none) over ``speakers`` (the caller's: ``--speaker``, ``speaker=``, a request's), as the HTTP
    API reads it. The dialogue is not cut (:func:`upto_speaker` cuts it); with speakers, its last turn may be empty
    (a tool call). A ``"tau"``, ``"eta_e"`` or ``"threshold"`` in the object is an :class:`InputError` naming it
    (:func:`refuse_thresholds`, ``thresholds`` and ``compare`` its words), as is a bad speaker: never silently ignored.

    >>> d, who = parse_checked({"turns": ["Pets?", "A dog.", "Bye", ""], "speaker": "B"}, ["A"])
    >>> who, len(d.turns)
    (['B'], 4)
    >>> parse_checked({"turns": ["Hi"], "speaker": ""})
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: speaker: empty (name the speaker whose turn is checked)
    """
    if isinstance(obj, dict):
        refuse_thresholds(obj, thresholds, compare)
        speakers = check_speakers(obj.get("speaker")) or speakers
    return parse_dialogue(obj, allow_empty_last=speakers is not None), speakers


def check_dialogue(d: Dialogue, allow_empty_last: bool = False) -> Dialogue:
    """``d`` when a :class:`Dialogue` built in Python passes the checks :func:`parse_dialogue` applies to JSON
    (at least one turn; each a :class:`Turn` with a speaker and text; a last turn with text unless
    ``allow_empty_last``; a knowledge base, if any, a :class:`KnowledgeBase` whose cells are strings), else an
    :class:`InputError` naming the field.

    >>> check_dialogue(Dialogue(()))
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: turns: the dialogue is empty (at least one turn is needed)
    """
    if not d.turns:
        raise InputError("turns: the dialogue is empty (at least one turn is needed)")
    for i, t in enumerate(d.turns):
        if not isinstance(t, Turn):
            raise InputError(f"turns[{i}]: expected a Turn, got {json_type(t)}")
        if not isinstance(t.text, str):
            raise InputError(f"turns[{i}].text: expected a string, got {json_type(t.text)}")
        _check_text(t.text, f"turns[{i}].text")
        if not isinstance(t.speaker, str):
            raise InputError(f"turns[{i}].speaker: expected a string, got {json_type(t.speaker)}")
        if not t.speaker.strip():
            raise InputError(f"turns[{i}].speaker: {blank_speaker(t.speaker)} (name who said the turn)")
    if not allow_empty_last and is_blank(d.turns[-1].text):
        raise InputError(f"turns[{len(d.turns) - 1}].text: the last turn is empty: there is nothing to check")
    if d.knowledge is not None:
        _check_knowledge_base(d.knowledge)
    return d


def _check_knowledge_base(kb: Any) -> None:
    """An :class:`InputError` naming the field unless ``kb`` is a :class:`KnowledgeBase` of rows of column ->
    string (what :func:`parse_knowledge` makes of a JSON list of records, and what the detectors read)."""
    hint = "dialcheck.io.parse_knowledge reads a list of records"
    if not isinstance(kb, KnowledgeBase):
        raise InputError(f"knowledge: expected a KnowledgeBase, got {json_type(kb)} ({hint})")
    if not isinstance(kb.rows, (tuple, list)):
        raise InputError(f"knowledge.rows: expected a tuple of rows, got {json_type(kb.rows)} ({hint})")
    for i, row in enumerate(kb.rows):
        if not isinstance(row, Mapping):
            raise InputError(f"knowledge[{i}]: expected a mapping of column -> value, got {json_type(row)} ({hint})")
        for k, v in row.items():
            if not isinstance(v, str):
                raise InputError(f"knowledge[{i}].{k}: expected a string, got {json_type(v)} ({hint})")


def opening_context(obj: Any) -> Dialogue | None:
    """A dialogue object whose ``"turns"`` (or ``"messages"``) list is empty, as a context without turns (its id and
    knowledge read as :func:`parse_dialogue` reads them): candidate replies that open the conversation. None for
    anything else."""
    if not isinstance(obj, dict):
        return None
    key = "messages" if "turns" not in obj and "messages" in obj else "turns"
    if obj.get(key) != []:
        return None
    d = parse_dialogue({**obj, key: [""]}, allow_empty_last=True)
    return Dialogue((), d.knowledge, d.meta)


def as_context(context: Any, field: str = "context") -> Dialogue:
    """A context to which candidate replies are added: a :class:`Dialogue`, a list of strings (alternating
    speakers A/B) or :class:`Turn` objects, or a dialogue object (``{"turns": ...}``, ``{"messages": ...}``) or
    list of turn objects or chat messages as :func:`parse_dialogue` reads it. Its last turn may be empty; it may
    have no turns at all (``[]``, ``{"turns": []}``): the candidates open the conversation, with nothing said before
    them to contradict. A single string, or anything else, is an :class:`InputError` naming ``field``.

    >>> [t.text for t in as_context({"turns": ["I have a dog.", "Nice."]}).turns]
    ['I have a dog.', 'Nice.']
    >>> as_context("I have a dog.")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: context: expected a list of turns, got a string (a context is a list of turns)
    """
    try:
        if isinstance(context, Dialogue):
            return check_dialogue(context, allow_empty_last=True) if context.turns else context
        opening = opening_context(context)
        if opening is not None:
            return opening
        if isinstance(context, dict) or (
            isinstance(context, (list, tuple)) and any(isinstance(t, dict) for t in context)
        ):  # a dialogue object, or a list of turn objects or chat messages as check reads it
            return parse_dialogue(context, allow_empty_last=True)
    except InputError as e:
        raise InputError(f"{field}: {e.message}") from None
    if isinstance(context, (str, bytes)):
        raise InputError(f"{field}: expected a list of turns, got a string (a context is a list of turns)")
    if not isinstance(context, (list, tuple)):
        raise InputError(f"{field}: expected a list of turns, got {json_type(context)}")
    turns = []
    for i, t in enumerate(context):
        if isinstance(t, Turn):
            turns.append(t)
        elif isinstance(t, str):
            turns.append(Turn("AB"[i % 2], _check_text(t, f"{field}[{i}]")))
        else:
            raise InputError(f"{field}[{i}]: expected a string or a Turn, got {json_type(t)}")
    if not turns:
        return Dialogue(())
    try:
        return check_dialogue(Dialogue(tuple(turns)), allow_empty_last=True)
    except InputError as e:
        raise InputError(f"{field}: {e.message}") from None


def as_texts(values: Any, field: str = "candidates") -> list[str]:
    """A list of strings (e.g. candidate replies) from any iterable of strings; a single string, or an item
    that is not a string, is an :class:`InputError` naming ``field``.

    >>> as_texts("Rex")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: candidates: expected a list of strings, got a string (one candidate: ["..."])
    """
    if isinstance(values, (str, bytes)):
        raise InputError(f'{field}: expected a list of strings, got a string (one candidate: ["..."])')
    if isinstance(values, dict) or not isinstance(values, Iterable):
        raise InputError(f"{field}: expected a list of strings, got {json_type(values)}")
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise InputError(f"{field}[{i}]: expected a string, got {json_type(v)}")
        _check_text(v, f"{field}[{i}]")
    return out


def as_dialogues(items: Iterable[Any]) -> list[Dialogue]:
    """What a detector's ``predict`` accepts: :class:`Dialogue` objects, and anything :func:`parse_dialogue`
    reads (a list of strings, a ``{"turns": ...}`` or ``{"messages": ...}`` object); a bad one raises
    :class:`InputError` naming it (``dialogues[2]: turns[0].text: ...``). An object is read as :func:`parse_checked`
    reads it: with a ``"speaker"``, its last turn with text by that speaker is the one checked (it is cut after
    it), and a ``"tau"`` in it is refused.

    >>> [d.last.text for d in as_dialogues([["Hi", "Hello"], {"turns": ["a", "b", "c"]}])]
    ['Hello', 'c']
    >>> as_dialogues(["Hi", "Hello"])
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: dialogues[0]: expected a dialogue, got a string (one dialogue: [["Hi", ...]])
    """
    if isinstance(items, (str, Dialogue, dict)):
        raise InputError(f"dialogues: expected a list of dialogues, got one {json_type(items)}; pass [dialogue]")
    if not isinstance(items, Iterable):
        raise InputError(f"dialogues: expected a list of dialogues, got {json_type(items)}")
    out = []
    for i, obj in enumerate(items):
        if isinstance(obj, Dialogue):
            try:  # an empty last turn is scored (0.0): ``rank`` and ``/rank`` score empty candidates
                out.append(check_dialogue(obj, allow_empty_last=True))
            except InputError as e:
                raise InputError(f"dialogues[{i}]: {e.message}") from None
        elif isinstance(obj, str):
            raise InputError(f'dialogues[{i}]: expected a dialogue, got a string (one dialogue: [["Hi", ...]])')
        else:
            try:
                d, who = parse_checked(obj)
                out.append(d if who is None else upto_speaker(d, who))
            except InputError as e:
                raise InputError(f"dialogues[{i}]: {e.message}") from None
    return out


def spoken_by(d: Dialogue, speakers: list[str] | None) -> list[int]:
    """Indices of the turns with text said by one of ``speakers`` (any speaker when None): the turns a
    ``--speaker`` or ``--every-turn`` run can check (a tool call's empty message is not one).

    >>> spoken_by(Dialogue.from_texts(["a", "b", "c", ""], speakers=("user", "assistant")), ["assistant"])
    [1]

    ``user`` names a group chat's named users too (:func:`user_names`): ``--speaker user`` checks the last user
    message, whoever wrote it, held to that user's own earlier ones.
    """
    if speakers and "user" in speakers:
        speakers = [*speakers, *user_names(d)]
    by = d.turns_by(speakers) if speakers else range(len(d.turns))
    return [i for i in by if not is_blank(d.turns[i].text)]


def upto_speaker(d: Dialogue, speakers: str | Sequence[str]) -> Dialogue:
    """``d`` cut after the last turn with text by one of ``speakers``: the dialogue whose last turn is that
    speaker's last reply (a chat log ending with the user's message or an assistant's tool call). Turn indices
    are unchanged. Raises :class:`InputError` when no such turn exists.

    >>> d = Dialogue.from_texts(["hi", "I have a dog.", "ok?", ""], speakers=("user", "assistant"))
    >>> [t.text for t in upto_speaker(d, "assistant").turns]
    ['hi', 'I have a dog.']
    >>> upto_speaker(d, "bot")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: speaker: no turn with text by bot (its speakers: assistant, user)
    """
    names = check_speakers(speakers) or []
    by = spoken_by(d, names)
    if not by:  # named as the field at fault: the speaker asked for (a record's own, --speaker, speaker=)
        said = ", ".join(sorted({t.speaker for t in d.turns}))
        raise InputError(f"speaker: no turn with text by {' or '.join(names)} (its speakers: {said})")
    return d.upto(by[-1])


#: The chat-completion roles of messages that are not the assistant's reply: a log that ends with one is checked at
#: that message, though the assistant's last reply is what one means to check (``--speaker assistant``).
OTHER_CHAT_ROLES = ("user", "system", "developer", "tool", "function", "ipython")


def ends_off_assistant(d: Dialogue) -> str | None:
    """The role of a chat-completion log's last message when it is not the assistant's (``user``, ``tool``,
    ``system``: :data:`OTHER_CHAT_ROLES`) and the assistant has a reply with text to check instead (``--speaker
    assistant``); else None. Two stock lookups, ``{"in_stock": 0}`` ... ``{"in_stock": 5}``, are a contradiction
    when the last message, a tool result, is checked. A dialogue whose speakers are not chat roles (``A``/``B``,
    ``User``/``Bot``, names) is None: whose turn is meant is not the reader's to guess.

    >>> log = [{"role": "user", "content": "Stock?"}, {"role": "assistant", "content": "None left."},
    ...        {"role": "assistant", "content": None}, {"role": "tool", "content": '{"in_stock": 5}'}]
    >>> ends_off_assistant(parse_dialogue(log)), ends_off_assistant(parse_dialogue(log[:2]))
    ('tool', None)
    >>> ends_off_assistant(Dialogue.from_texts(["Hi", "Hello", "Bye"], speakers=("User", "Bot")))

    A group chat's user named by ``name`` (:func:`user_names`) is ``user``.
    """
    role = chat_role(d, len(d.turns) - 1) if d.turns else None
    if role not in OTHER_CHAT_ROLES or not spoken_by(d, ["assistant"]):
        return None
    return role


_LABEL_KEYS = ("label", "gold", "is_contradiction", "contradicts", "contradictory")  # not read: named in the error

# Where the thresholds are set, for the error about a threshold in a labelled dialogue (evaluate --data, train
# --dialogues, --calibrate-on): its label is gold, and the model's thresholds decide its verdict.
LABELLED_THRESHOLDS = (
    "a labelled dialogue holds a dialogue and its gold label; the thresholds are the model's (`evaluate --tau` / "
    "`--eta-e`; `train` chooses them on held-out dialogues, or on yours with `--calibrate-on FILE`)"
)


def parse_example(obj: Any, require_category: bool = False) -> Example:
    """One labelled dialogue: a dialogue object with ``contradiction``, optional ``evidence`` turn indices and
    a ``category``: with ``require_category`` (CDConv's four categories), each contradiction must name one;
    otherwise a CDConv category is kept and anything else (e.g. a task-oriented verdict's) is ignored.

    The dialogue is read as ``dialcheck check`` reads it (:func:`parse_checked`): with a ``"speaker"`` (a name or a
    list), the label and evidence are about that speaker's last turn with text, the turn ``check`` checks, and the
    dialogue is cut after it (turn indices unchanged); a ``"tau"``, ``"eta_e"`` or ``"threshold"`` is refused.

    >>> ex = parse_example({"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True,
    ...                     "evidence": [0]})
    >>> ex.label, ex.evidence
    (True, (0,))
    >>> parse_example({"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": True,
    ...                "evidence": [1, 2]})
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: evidence: 2 is not an earlier turn (this dialogue's earlier turns are 0..1)
    >>> parse_example({"turns": ["你养猫吗？", "养了两只。", "几岁了？", "我没养猫。"], "contradiction": True,
    ...                "category": "history"}, require_category=True).category
    'history'
    >>> ex = parse_example({"turns": ["I have a dog.", "Nice!", "I have no pets.", "Oh?"], "speaker": "A",
    ...                     "contradiction": True, "evidence": [0]})
    >>> ex.dialogue.last.text, ex.evidence
    ('I have no pets.', (0,))
    """
    if not isinstance(obj, dict):
        raise InputError(f'expected a dialogue object with a "contradiction" field, got {json_type(obj)}')
    dialogue, speakers = parse_checked(obj, None, LABELLED_THRESHOLDS, "`score` (`evaluate --predictions`)")
    if speakers is not None:  # labelled as check reads it: the label is about that speaker's last turn with text
        dialogue = upto_speaker(dialogue, speakers)
    if "contradiction" not in obj:
        other = next((k for k in _LABEL_KEYS if k in obj), None)  # the gold label under another name: not read
        hint = f'; "{other}" is not read: name the field "contradiction"' if other else ""
        raise InputError(f"contradiction: missing (true or false{hint})")
    label = obj["contradiction"]
    if not isinstance(label, bool):
        raise InputError(f"contradiction: expected true or false, got {json_type(label)}")
    raw = obj.get("evidence")
    evidence: tuple[int, ...] | None
    if raw is None:
        evidence = None if label else ()
    else:
        if not isinstance(raw, list):
            raise InputError(f"evidence: expected a list of turn indices, got {json_type(raw)}")
        for j, i in enumerate(raw):  # "got list" named the list, not the index in it that is wrong
            if isinstance(i, bool) or not isinstance(i, int):
                raise InputError(f"evidence[{j}]: expected a turn index (a whole number), got {json_type(i)}")
        last = len(dialogue.turns) - 2
        for i in raw:
            if not 0 <= i <= last:
                before = "this dialogue's earlier turns"
                if speakers is not None:  # cut: the turns before the one labelled
                    before = f"the turns before {' or '.join(speakers)}'s last turn, the one labelled,"
                raise InputError(f"evidence: {i} is not an earlier turn ({before} are 0..{last})")
        if raw and not label:
            raise InputError("evidence: a dialogue labelled as no contradiction names no evidence turns")
        evidence = tuple(sorted(set(raw))) if raw or not label else None  # [] on a contradiction: not annotated
    category = obj.get("category")
    if not require_category:  # only the four-category benchmark reads it; other tasks' verdict categories pass
        category = category if category in CATEGORIES and label else None
    elif category is not None:
        if not isinstance(category, str) or category not in CATEGORIES:
            shown = repr(category) if isinstance(category, str) else json_type(category)
            raise InputError(f"category: expected one of {', '.join(CATEGORIES)} or null, got {shown}")
        if not label:
            raise InputError(f"category: a dialogue labelled as no contradiction has no category, got {category!r}")
    elif label:
        raise InputError(f"category: missing (a contradiction needs one of {', '.join(CATEGORIES)})")
    return Example(dialogue, label, evidence, category=category, id=str(dialogue.meta.get("id", "")))


def example_record(example: Example) -> dict[str, Any]:
    """The labelled-dialogue record of ``example`` (the format of ``dialcheck evaluate --data`` and ``train
    --dialogues``), which :func:`parse_example` reads back as the same example: id, turns with speakers,
    ``contradiction``, and ``evidence``, ``category`` and ``knowledge`` when the example has them.

    >>> from dialcheck.schema import Dialogue
    >>> d = Dialogue.from_texts(["你有猫吗？", "有一只。", "几岁了？", "我没有猫。"])
    >>> ex = Example(d, True, (1,), "history", id="c7")
    >>> rec = example_record(ex)
    >>> rec["turns"][1], rec["contradiction"], rec["evidence"], rec["category"]
    ({'speaker': 'B', 'text': '有一只。'}, True, [1], 'history')
    >>> parse_example(rec) == ex
    True
    """
    rec: dict[str, Any] = {"id": example.id} if example.id else {}
    rec["turns"] = [{"speaker": t.speaker, "text": t.text} for t in example.dialogue.turns]
    rec["contradiction"] = bool(example.label)
    if example.evidence:
        rec["evidence"] = list(example.evidence)
    if example.category:
        rec["category"] = example.category
    if example.dialogue.knowledge is not None:
        rec["knowledge"] = [dict(row) for row in example.dialogue.knowledge.rows]
    return rec


@dataclass(frozen=True)
class ParsedRecord:
    """One input record: its position (1-based line for JSONL, 0-based item for JSON lists) and result.

    ``example`` is set when labelled dialogues were read (:func:`read_examples`); ``at_line`` is the 1-based
    line of the file the record is on, when it is known (JSONL, or a JSON file of one line). ``speakers``: whose
    last turn with text is checked (None: the last turn), when dialogues to check were read (:func:`parse_checked`:
    the record's own ``"speaker"`` over the reader's ``speakers``), and ``own_speaker`` whether they are the record's
    own (a record whose own speaker said nothing is a bad record; one without a turn by ``--speaker`` is counted).
    ``raw_id_key``: the field ``raw_id`` was given in (:func:`id_key`: ``"id"``, ``"dialogue_id"``, ...), for a
    message naming it as the user wrote it."""

    line: int
    dialogue: Dialogue | None
    error: InputError | None
    raw_id: str | None = None
    example: Example | None = None
    at_line: int | None = None
    speakers: list[str] | None = None
    raw_id_key: str | None = None
    own_speaker: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


# parse_dialogue, parse_checked or parse_example, configured
_Parser = Callable[[Any], Dialogue | Example | tuple[Dialogue, list[str] | None]]


def _parse(obj: Any, parser: _Parser, raw_id: str | None, line: int, at_line: int | None) -> ParsedRecord:
    got = parser(obj)
    key = id_key(obj)
    if isinstance(got, Example):
        return ParsedRecord(line, got.dialogue, None, raw_id, got, at_line, raw_id_key=key)
    if isinstance(got, tuple):  # parse_checked's: the speakers are the record's own when it names one
        own = isinstance(obj, dict) and obj.get("speaker") is not None
        return ParsedRecord(
            line, got[0], None, raw_id, at_line=at_line, speakers=got[1], raw_id_key=key, own_speaker=own
        )
    return ParsedRecord(line, got, None, raw_id, at_line=at_line, raw_id_key=key)


def _is_message_list(value: list[Any]) -> bool:
    """Whether a JSON list is one dialogue's chat-completion messages: every item has a role and content, or is a
    Responses API tool call or output (``function_call``, ``function_call_output``, ...), and one is a message."""
    messages = [isinstance(v, dict) and "role" in v and "content" in v for v in value]
    return any(messages) and all(m or _responses_tool_kind(v) for m, v in zip(messages, value, strict=True))


def _is_dialogue_list(value: list[Any]) -> bool:
    """A JSON list is a list of dialogues unless it is itself one dialogue's turns (or messages): its first
    item is a string or a turn object (so ``["Hi", 5]`` is a dialogue whose ``turns[1]`` is wrong)."""
    if not value or _is_message_list(value):
        return False
    first = value[0]
    is_turn = isinstance(first, dict) and ("text" in first or "content" in first) and "turns" not in first
    return not (isinstance(first, str) or is_turn)


def _iter_jsonl(
    lines: Iterable[str | bytes], name: str, parser: _Parser, sniffed: bool = False
) -> Iterator[ParsedRecord]:
    """The records of JSON Lines. ``sniffed``: the text was found to be JSON Lines (not one JSON document), so a
    first line that is not JSON says so: that line is one bad record, not the whole file's error."""
    first = True
    for n, line in enumerate(lines, start=1):
        if isinstance(line, bytes):  # a streamed file: a line that is not UTF-8 is a bad record, not the end
            try:
                line = decode_utf8(line, name, n)
            except InputError as e:
                first = False
                yield ParsedRecord(n, None, e, at_line=n)
                continue
        if not line.strip():
            continue
        was_first, first = first, False
        try:
            obj = json.loads(line.rstrip("\r\n"))  # a cut string: "Unterminated", not the newline
        except json.JSONDecodeError as e:
            read_as = ": the file was read as JSON Lines, one record per line" if sniffed and was_first else ""
            yield ParsedRecord(n, None, InputError(json_error(e) + read_as, name, n), at_line=n)
            continue
        raw_id = _raw_id(obj)
        try:
            yield _parse(obj, parser, raw_id, n, n)
        except InputError as e:
            yield ParsedRecord(n, None, e.at(name, n), raw_id, at_line=n)


def read_dialogues(
    source: str | Path | TextIO,
    name: str | None = None,
    jsonl: bool | None = None,
    labelled: bool = False,
    require_category: bool = False,
    allow_empty_last: bool = False,
    utf8_per_line: bool = False,
    checking: bool = False,
    speakers: list[str] | None = None,
) -> Iterator[ParsedRecord]:
    """Parse every dialogue in a JSON/JSONL file, ``-`` (stdin) or an open text stream.

    Bad records are yielded with an :class:`InputError` (file, line, field) instead of a dialogue, so a
    caller can stop at the first one (``check``) or skip and report them (``score``). ``jsonl=True``
    reads one dialogue per line whatever the content (batch jobs); ``None`` detects the format.
    ``labelled=True`` also requires each record's label (:func:`parse_example`) and sets ``example``;
    ``require_category`` also requires each contradiction's CDConv category. ``allow_empty_last`` accepts a
    dialogue whose last turn has no text (see :func:`parse_dialogue`).

    ``checking=True`` reads dialogues to check (``dialcheck check`` and ``score``) as :func:`parse_checked` does:
    each record's ``speakers`` is its own ``"speaker"``, or else ``speakers`` (``--speaker``), and a record with a
    ``"speaker"`` that is no name, or with a ``"tau"``, ``"eta_e"`` or ``"threshold"``, is a bad record.

    Bytes that are not UTF-8 stop the whole input with their line and column, unless ``utf8_per_line``
    (``read_examples``): then a JSONL input is decoded line by line and such a line is one more bad record
    (a JSON document still fails as a whole). A streamed JSONL input (``jsonl=True``) is always read so.
    """
    parser: _Parser
    if labelled:
        parser = partial(parse_example, require_category=require_category)
    elif checking:
        parser = partial(parse_checked, speakers=speakers)
    else:
        parser = partial(parse_dialogue, allow_empty_last=allow_empty_last)
    return _read_dialogues(source, name, jsonl, parser, utf8_per_line)


def _read_dialogues(
    source: str | Path | TextIO,
    name: str | None,
    jsonl: bool | None,
    parser: _Parser,
    utf8_per_line: bool = False,
    none: str = "dialogues",
) -> Iterator[ParsedRecord]:
    """:func:`read_dialogues`' reader, each record made by ``parser`` (``rerank`` keeps every value as it is);
    ``none``: what an empty JSON list ``[]`` is said to hold none of."""
    if jsonl and isinstance(source, (str, Path)) and str(source) != "-":
        name = name or str(source)  # streamed: logs can be large; each line decoded on its own
        yield from _iter_jsonl(input_lines(open_input(source, name), name), name, parser)
        return
    data: bytes | None = None  # a file's or stdin's bytes, decoded below
    if isinstance(source, (str, Path)) and str(source) == "-":
        name = name or input_name(source)
        if jsonl:  # streamed like a file: one bad byte is one bad line, not the input
            yield from _iter_jsonl(stdin_lines(), name, parser)
            return
        data = read_stdin()
    elif isinstance(source, (str, Path)):
        name = name or str(source)
        data = read_input(source, name)
    else:
        stream: TextIO = source
        name = name or getattr(source, "name", "<stream>")
    if data is not None:
        try:
            text = decode_utf8(data, name)  # not through a StringIO: 4 bytes a character more, and a copy
        except InputError:
            raw_lines = _jsonl_lines(data) if utf8_per_line else None
            if raw_lines is None:
                raise
            yield from _iter_jsonl(raw_lines, name, parser, sniffed=True)
            return
        data = None  # the bytes are not kept beside their text while the records are read
    else:
        text = stream.read()
    lines = text.split("\n")  # not splitlines(): JSON strings may hold U+2028 and other line breaks
    if not text.strip():
        raise InputError("the input is empty", name)
    if jsonl:
        yield from _iter_jsonl(lines, name, parser)
        return
    try:
        whole = json.loads(text.rstrip())  # trailing newline: a cut string reads "Unterminated"
    except json.JSONDecodeError as e:
        if _is_jsonl(e, lines):
            yield from _iter_jsonl(lines, name, parser, sniffed=True)
            return
        raise InputError(json_error(e), name, e.lineno) from None
    if whole == []:  # read as one dialogue, it was "turns: the dialogue is empty" or "expected a dialogue object"
        raise InputError(f"holds no {none}: an empty JSON list []", name)
    items = whole if isinstance(whole, list) and _is_dialogue_list(whole) else [whole]
    single = len(items) == 1 and items[0] is whole
    # a file of one non-empty line (a one-record .jsonl, a compact .json) is on line N whatever the item
    nonempty_at = [n for n, ln in enumerate(lines, start=1) if ln.strip()]
    line_no = nonempty_at[0] if len(nonempty_at) == 1 else None
    item_lines: list[int] | None = None
    for i, obj in enumerate(items):
        raw_id = _raw_id(obj)
        try:
            yield _parse(obj, parser, raw_id, i, line_no)
        except InputError as e:
            at = line_no
            if not single and at is None:  # a pretty-printed list: the line its bad dialogue starts on
                item_lines = _item_lines(text) if item_lines is None else item_lines
                at = item_lines[i] if i < len(item_lines) else None
            where = e if single else InputError(f"dialogue {i + 1}: {e.message}")
            yield ParsedRecord(i, None, where.at(name, at), raw_id, at_line=at)


def _item_lines(text: str) -> list[int]:
    """The 1-based line each item of a top-level JSON list starts on (``[]`` when the text is not one).

    >>> _item_lines('[\\n  {"turns": ["a"]},\\n  ["b",\\n   "c"], "d"\\n]')
    [2, 3, 4]
    """
    decoder = json.JSONDecoder()
    start = text.find("[")
    if start < 0 or text[:start].strip("\ufeff \t\r\n"):
        return []
    out: list[int] = []
    pos = start + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return out
        try:
            _, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return out
        out.append(text.count("\n", 0, pos) + 1)
        pos = end


def _is_jsonl(e: json.JSONDecodeError, lines: list[str]) -> bool:
    """Whether a text that is not one JSON document (``e``) is JSON Lines: it has several non-empty lines and
    its first is a JSON value of its own, or, its first line bad, most of the others (of the first
    ``_SNIFFED_LINES``) are each a JSON object or list: a pretty-printed document's lines are rarely one (an
    opening bracket, a ``"key": value,``, an item with its comma), so a syntax error in it is still named at its
    line and column, not as a bad line each.

    >>> def sniff(text):
    ...     try:
    ...         json.loads(text)
    ...     except json.JSONDecodeError as e:
    ...         return _is_jsonl(e, text.split("\\n"))
    >>> sniff('nope\\n{"turns": ["a"]}\\n["b", "c"]'), sniff('{"turns": ["a" "b"]}\\n{"turns": ["c"]}')
    (True, True)
    >>> sniff('[\\n  {"turns": ["a" "b"]},\\n  {"turns": ["c"]}\\n]'), sniff('{\\n  "turns": ["a",\\n  "b"]]\\n}')
    (False, False)
    """
    nonempty = [ln for ln in lines if ln.strip()]
    if len(nonempty) < 2:
        return False
    if e.msg == "Extra data" or _parses(nonempty[0]):
        return True
    rest = nonempty[1 : 1 + _SNIFFED_LINES]
    return 2 * sum(_is_record_line(ln) for ln in rest) > len(rest)


_SNIFFED_LINES = 50  # lines after a bad first one that decide whether a text is JSON Lines


def _is_record_line(line: str) -> bool:
    """Whether ``line`` on its own is a JSON object or list (a record of JSON Lines)."""
    s = line.strip()
    if s[:1] not in ("{", "[") or s[-1:] not in ("}", "]"):
        return False
    try:
        return isinstance(json.loads(s), (dict, list))
    except (ValueError, RecursionError):
        return False


def _jsonl_lines(data: bytes) -> list[bytes] | None:
    """The lines of ``data`` (not all UTF-8) when it is JSON Lines once its bad bytes are replaced, to be
    decoded one by one; None for a JSON document (or anything else), which fails as a whole.

    >>> _jsonl_lines(b'["a", "b"]\\n["caf\\xe9", "b"]\\n')
    [b'["a", "b"]', b'["caf\\xe9", "b"]', b'']
    >>> _jsonl_lines(b'[\\n  ["caf\\xe9", "b"]\\n]') is None
    True
    """
    text = data.decode("utf-8-sig", errors="replace")
    try:
        json.loads(text.rstrip())
    except json.JSONDecodeError as e:
        return data.split(b"\n") if _is_jsonl(e, text.split("\n")) else None
    return None


def _parses(line: str | bytes) -> bool:
    """Whether ``line`` is one JSON value on its own (bytes that are not UTF-8, or nesting too deep: no)."""
    try:
        json.loads(line)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return False
    return True


def input_name(path: str | Path) -> str:
    """How an input file is named in its errors, notes and warnings, whatever the command (``check``, ``score``,
    ``rerank``, ``probe``, ``evaluate --data``): ``<stdin>`` for ``-``, else the path as given. Only ids built from
    the name say ``stdin`` (:func:`labelled_source_name`).

    >>> input_name("-"), input_name("logs/chat.jsonl")
    ('<stdin>', 'logs/chat.jsonl')
    """
    return "<stdin>" if str(path) == "-" else str(path)


def output_name(path: str | Path) -> str:
    """How a command's summary names the file it wrote: ``<stdout>`` for ``-`` (as :func:`input_name` names standard
    input), else the path as given.

    >>> output_name("-"), output_name("out/triggers.jsonl")
    ('<stdout>', 'out/triggers.jsonl')
    """
    return "<stdout>" if str(path) == "-" else str(path)


def plural_of(noun: str) -> str:
    """The plural of a count noun (the last word of ``noun``) as dialcheck's messages name things: "es" after s, x,
    z, ch or sh, a consonant's "y" made "ies", else "s".

    >>> [plural_of(w) for w in ("batch", "box", "trigger", "reply", "day", "FQness score")]
    ['batches', 'boxes', 'triggers', 'replies', 'days', 'FQness scores']
    """
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n noun`` as a summary says it: the noun's plural (``plural``, else :func:`plural_of`) unless ``n`` is 1.

    >>> counted(1, "trigger"), counted(2, "trigger"), counted(0, "reply"), counted(1, "reply"), counted(2, "batch")
    ('1 trigger', '2 triggers', '0 replies', '1 reply', '2 batches')
    """
    if n == 1:
        return f"1 {noun}"
    return f"{n} {plural_of(noun) if plural is None else plural}"


def labelled_source_name(path: str | Path) -> str:
    """How a labelled-dialogues file (``evaluate --data``, ``train --dialogues``) is named in the ids of its records
    that give none: ``stdin`` for ``-`` (its records ``stdin:3``, as evaluate's split), else the path as given; its
    messages name it as every input is named (:func:`input_name`: ``<stdin>``).

    >>> labelled_source_name("-"), labelled_source_name("logs/mine.jsonl")
    ('stdin', 'logs/mine.jsonl')
    """
    return "stdin" if str(path) == "-" else str(path)


def read_examples(
    source: str | Path | TextIO,
    name: str | None = None,
    require_category: bool = False,
    english: bool = False,
    limit: int | None = None,
    notes: list[str] | None = None,
    refuse: Callable[[Dialogue], None] | None = None,
) -> tuple[list[Example], list[InputError]]:
    """Every labelled dialogue of a JSON/JSONL file, and the errors of the records that were skipped
    (with ``require_category``, contradictions without a CDConv category are among them; with ``english``,
    Chinese and mixed-language dialogues, which the English default cannot read; with ``refuse``, those whose
    dialogue it raises an :class:`InputError` for, named by file and line as the others are: ``evaluate --data``
    with a Chinese model refuses a chat log ending with a tool's result). A JSONL line that is not
    UTF-8 is one such record; a JSON document that is not UTF-8 fails as a whole (:func:`decode_utf8`).

    A record without an id gets ``FILE:LINE`` (JSONL, or a file of one line) or ``FILE:dialogue N`` (the N-th
    dialogue of a multi-line JSON list) as its id; read from ``-``, ``stdin:LINE`` (as ``evaluate --data -`` names
    its split), while its errors and notes name the input ``<stdin>``, as every command's messages do
    (:func:`input_name`).

    With ``limit``, reading stops at the ``limit``-th good record: the errors are those of the records before it
    (``evaluate --limit N`` counted the bad records of the whole file beside its first N).

    ``notes``, when given, gets one warning about the file (``FILE: ...``), if any of its contradictions names as
    evidence a turn of another speaker than the last turn's (:func:`other_speaker_note`): not an error, but a turn
    the utterance-based detector never pairs.

    >>> import io
    >>> good = '{"turns": ["I have a dog.", "Nice!", "I have no pets."], "contradiction": true}'
    >>> examples, errors = read_examples(io.StringIO(good + "\\n" + '{"turns": ["Hi", "Hello"]}'), "logs.jsonl")
    >>> len(examples), examples[0].id, str(errors[0])
    (1, 'logs.jsonl:1', 'logs.jsonl, line 2: contradiction: missing (true or false)')
    """
    examples: list[Example] = []
    errors: list[InputError] = []
    piped = name is None and isinstance(source, (str, Path)) and str(source) == "-"
    if piped:
        name = input_name(source)  # "<stdin>" in errors and notes, as every command names standard input
    label = name or (source if isinstance(source, (str, Path)) else getattr(source, "name", "<stream>"))
    prefix = labelled_source_name(source) if piped else Path(str(label)).name  # ids "stdin:3", as they always were
    other: list[str] = []  # where a contradiction's evidence names another speaker's turn
    for rec in read_dialogues(source, name, labelled=True, require_category=require_category, utf8_per_line=True):
        if rec.example is not None and english and (kind := dialogue_language(rec.example.dialogue)) != "other":
            why = "a Chinese conversation" if kind == "zh" else "a dialogue mixing Chinese and non-Chinese turns"
            hint = "; evaluate Chinese ones with --benchmark cdconv --data FILE" if kind == "zh" else ""
            line = rec.at_line if rec.at_line is not None else None
            where = "" if line is not None else f"dialogue {rec.line + 1}: "
            errors.append(InputError(f"{where}{why}: the English default does not read it{hint}", str(label), line))
        elif rec.example is not None and refuse is not None and (refused := _refused(refuse, rec)) is not None:
            where = "" if rec.at_line is not None else f"dialogue {rec.line + 1}: "
            errors.append(InputError(where + refused.message, str(label), rec.at_line))
        elif rec.example is not None:
            ex = rec.example
            where = rec.at_line if rec.at_line is not None else f"dialogue {rec.line + 1}"
            examples.append(ex if ex.id else replace(ex, id=f"{prefix}:{where}"))
            if other_speaker_evidence(ex):
                other.append(f"line {where}" if isinstance(where, int) else where)
            if limit is not None and len(examples) >= limit:
                break
        elif rec.error is not None:
            errors.append(rec.error)
    if notes is not None and other:
        notes.append(f"{label}: {other_speaker_note(other, sum(ex.label for ex in examples))}")
    return examples, errors


def _refused(refuse: Callable[[Dialogue], None], rec: ParsedRecord) -> InputError | None:
    """The :class:`InputError` ``refuse`` raises for the dialogue of ``rec`` (a labelled record), or None."""
    try:
        refuse(rec.example.dialogue)  # type: ignore[union-attr]
    except InputError as e:
        return e
    return None


def other_speaker_evidence(example: Example) -> list[int]:
    """The evidence turns of ``example`` said by another speaker than its last turn's.

    >>> other_speaker_evidence(parse_example({"turns": ["I have a dog.", "Nice", "No pets."], "contradiction": True,
    ...                                       "evidence": [0, 1]}))
    [1]
    """
    speaker = example.dialogue.last.speaker
    return [i for i in example.evidence or () if example.dialogue.turns[i].speaker != speaker]


def named_some(names: Sequence[str], total: int, shown: int = 5, noun: str = "") -> str:
    """``names`` (of ``total`` ``noun``) for a message: all of them, or the first ``shown`` and how many more.

    >>> named_some(["dialogues[0]"], 1), named_some([f"dialogues[{i}]" for i in range(7)], 9)
    ('dialogues[0]', '7 of 9 (dialogues[0], dialogues[1], dialogues[2], dialogues[3], dialogues[4], ...)')
    >>> named_some(["line 2", "line 3"], 4, noun="contexts")
    '2 of 4 contexts (line 2, line 3)'
    """
    if len(names) == 1:
        return names[0]
    return f"{len(names)} of {total}{' ' + noun if noun else ''} ({_first_names(names, shown)})"


def _first_names(names: Sequence[str], shown: int = 5) -> str:
    """The first ``shown`` of ``names``, comma-separated, and ``...`` when there are more.

    >>> _first_names(["a", "b"]), _first_names(list("abcdefg"), 3)
    ('a, b', 'a, b, c, ...')
    """
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


def where_named(
    shown: Sequence[str], total: int, alone: str | None = "the dialogue", of: str = "", noun: str = ""
) -> str:
    """How a warning names the dialogues ``shown`` (their names) of ``total``: ``alone`` when there is one in all
    (None: its name), else :func:`named_some` (``noun``: what they are, "contexts"); ``of`` (" of FILE") names the
    file they are in.

    >>> where_named(["z1"], 1), where_named(["line 4"], 1, None), where_named(["a", "b"], 3)
    ('the dialogue', 'line 4', '2 of 3 (a, b)')
    >>> where_named(["z1"], 1, of=" of d.jsonl"), where_named(["a", "b"], 3, of=" of d.jsonl")
    ('the dialogue of d.jsonl (z1)', '2 of the 3 dialogues of d.jsonl (a, b)')
    """
    if not of:
        return alone if total == 1 and alone is not None else named_some(shown, total, noun=noun)
    if total == 1:
        return f"the dialogue{of} ({shown[0]})"
    return f"{len(shown)} of the {total} dialogues{of} ({_first_names(shown)})"


def other_speaker_note(where: Sequence[str], total: int) -> str:
    """The warning about the labelled contradictions at ``where`` (``"line 3"``, ``"dialogue 2"``; of ``total``
    read) whose evidence names a turn of another speaker than the last turn's: the utterance-based detector pairs the
    last turn only with its own speaker's earlier turns, so strict accuracy counts them wrong and evidence F1 is 0 on
    them. They are named as :func:`where_named` names them.

    >>> print(other_speaker_note(["line 2", "line 5", "line 9", "line 12"], 6)[:107])
    4 of 6 contradictions (line 2, line 5, line 9, line 12) name as evidence a turn of another speaker than the
    >>> print(other_speaker_note(["dialogue 2"], 2)[:67])
    the contradiction of dialogue 2 names as evidence a turn of another
    """
    n = len(where)
    named = where_named(where, total, None, noun="contradictions")
    them = "them" if n > 1 else "it"
    return (
        f"{named if n > 1 else 'the contradiction of ' + named} name{'' if n > 1 else 's'} as evidence a turn of "
        "another speaker than the last turn's: an utterance-based detector pairs the last turn only with its "
        f"speaker's own earlier turns, never names such a turn, and so is counted wrong on {them} by strict accuracy "
        "and evidence F1; an unstructured detector may name any turn. Check that the evidence indices count from 0 "
        "over all turns"
    )
