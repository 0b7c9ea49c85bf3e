"""Script detection: is a dialogue Chinese? Decides which shipped default checks it (see ``api.route``), and
which turns a model trained on English or Chinese cannot read (:func:`foreign_turns`, :func:`turn_script`).

A turn's CJK share is the share of CJK ideographs among its letters (CJK ideographs plus Latin, Greek,
Cyrillic, kana and Hangul letters; digits, punctuation and spaces do not count). A turn is Chinese when
the share reaches :data:`ZH_SHARE`, and not Chinese when it stays under :data:`OTHER_SHARE`.

>>> cjk_share("我养了2只猫!"), cjk_share("I have 2 cats"), cjk_share("我爱 Python")
(1.0, 0.0, 0.25)
>>> dialogue_language(Dialogue.from_texts(["你好", "你好！有什么事？"]))
'zh'
>>> dialogue_language(Dialogue.from_texts(["你喜欢什么音乐？", "OK", "我喜欢Taylor Swift的歌。"]))
'zh'

A turn of at most :data:`SHORT_WORDS` words without CJK ("OK", "haha") does not vote in a dialogue with Chinese
turns. A turn with kana is Japanese, never Chinese.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from .errors import InputError
from .schema import Dialogue, Verdict

__all__ = [
    "CHECK_ASSISTANT",
    "CHOOSE_CLI",
    "CHOOSE_LABELLED",
    "CHOOSE_MODEL",
    "CHOOSE_SERVER",
    "INSTRUCTION_ROLES",
    "OTHER_SHARE",
    "SENTENCE_END",
    "TOOL_ROLES",
    "ZH_SHARE",
    "check_chinese_conversation",
    "check_chinese_last_turn",
    "check_not_japanese",
    "chinese_lacking",
    "chinese_reading",
    "chinese_turns_lacking",
    "cjk_share",
    "conversation_turns",
    "dialogue_language",
    "foreign_scripts",
    "foreign_turns",
    "is_chinese",
    "is_tool_turn",
    "renumbered",
    "turn_field",
    "turn_script",
]

ZH_SHARE = 0.5
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")  # the space after an English sentence: SENTENCE_END.split(text)
OTHER_SHARE = 0.2
# How a caller of the library chooses a model of its own, for the advice of an error that no shipped default can
# check a dialogue. The command line passes CHOOSE_CLI, the HTTP API CHOOSE_SERVER.
CHOOSE_MODEL = "pass model=FOLDER (dialcheck.check(..., model=...), dialcheck.load(...))"
CHOOSE_CLI = "pass --model"
CHOOSE_SERVER = "start the server with --model"
#: The ``choose`` of a labelled record (``evaluate --data``): it names its checked turn by its own ``"speaker"`` only.
CHOOSE_LABELLED = "label a record of your own"
#: How each caller (by its ``choose``: :data:`CHOOSE_CLI`, :data:`CHOOSE_SERVER`, :data:`CHOOSE_LABELLED`; any other
#: is the library's) checks the assistant's last reply of a chat log, for the advice of an error about its last turn.
CHECK_ASSISTANT = {
    CHOOSE_CLI: '--speaker assistant, or "speaker": "assistant" in the dialogue object,',
    CHOOSE_SERVER: '"speaker": "assistant" in the request (beside "dialogues", or in the dialogue object)',
    CHOOSE_LABELLED: '"speaker": "assistant" in the record (its label then about that reply)',
}
CHECK_ASSISTANT_LIBRARY = 'speaker="assistant" (dialcheck.check(..., speaker=...)), or "speaker": "assistant" in the '
CHECK_ASSISTANT_LIBRARY += "dialogue object,"


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F


def cjk_share(text: str) -> float:
    """Share of CJK ideographs among the letters of ``text`` (0 when it has no letters)."""
    if text.isascii():  # the common case of a chat log, without a call per character
        return 0.0
    cjk = other = 0
    for ch in text:
        if _is_cjk(ch):
            cjk += 1
        elif ch.isalpha() and unicodedata.category(ch).startswith("L"):
            other += 1
    return cjk / (cjk + other) if cjk + other else 0.0


SHORT_WORDS = 2  # a turn of at most this many words without CJK ("OK", "haha", "lol ok") does not make a
# Chinese conversation mixed: Chinese users type them too


def _has_kana(text: str) -> bool:
    if text.isascii():
        return False
    return any(0x3040 <= ord(ch) <= 0x30FF for ch in text)


def _turn_languages(texts: Sequence[str]) -> list[str]:
    """Each turn's vote: ``"zh"``, ``"other"`` or ``"unknown"`` (no vote); a short turn with no CJK votes
    ``"other"`` only when no turn is Chinese."""
    out = []
    for t in texts:
        s, kana = cjk_share(t), _has_kana(t)
        if s >= ZH_SHARE and not kana:
            out.append("zh")
        elif any(ch.isalpha() for ch in t) and (s < OTHER_SHARE or kana):
            out.append("short" if s == 0 and not kana and len(t.split()) <= SHORT_WORDS else "other")
        else:
            out.append("unknown")
    neutral = "unknown" if "zh" in out else "other"
    return [neutral if x == "short" else x for x in out]


#: The chat-log roles whose messages are a tool's result (Chat Completions' ``tool``, the older ``function``, Llama's
#: ``ipython``): data the assistant read, not something said in the conversation's language.
TOOL_ROLES = ("tool", "function", "ipython")


def is_tool_turn(d: Dialogue, i: int) -> bool:
    """Whether turn ``i`` of ``d`` is a chat log's tool result (a :data:`TOOL_ROLES` message) or a tool call without
    text: a message that carries ``tool_calls`` (or ``function_call``) or a Responses API ``function_call`` or
    ``reasoning`` item, as :func:`~dialcheck.io.parse_dialogue` marks them (``meta["tool_calls"]``). An assistant's
    message without text that calls nothing is an empty reply, not a tool call.

    >>> from dialcheck.io import parse_dialogue
    >>> log = parse_dialogue([{"role": "user", "content": "Stock?"}, {"role": "assistant", "content": None,
    ...     "tool_calls": [{"id": "c1"}]}, {"role": "tool", "content": '{"in_stock": 0}'},
    ...     {"role": "assistant", "content": ""}], allow_empty_last=True)
    >>> [is_tool_turn(log, i) for i in range(4)]
    [False, True, True, False]
    """
    turn = d.turns[i]
    return turn.speaker in TOOL_ROLES or (i in d.meta.get("tool_calls", ()) and not turn.text.strip())


#: The chat-log roles whose messages are the chat's instructions (the system prompt; OpenAI's ``developer``): not said
#: in the conversation, and often in English above a Chinese chat. Read so only in a chat log (a dialogue with an
#: ``assistant`` turn): in a task-oriented dialogue of ``user`` and ``system`` turns, ``system`` is the bot.
INSTRUCTION_ROLES = ("system", "developer")


def _left_out(d: Dialogue) -> list[bool]:
    """For each turn of ``d``, whether a Chinese detector leaves it out: a tool call or result (:func:`is_tool_turn`)
    or, in a chat log, a system or developer message (:data:`INSTRUCTION_ROLES`)."""
    chat = any(t.speaker == "assistant" for t in d.turns)
    return [is_tool_turn(d, i) or (chat and t.speaker in INSTRUCTION_ROLES) for i, t in enumerate(d.turns)]


def conversation_turns(d: Dialogue) -> list[int]:
    """The turns of ``d`` said in its conversation, those a Chinese (four-category, CDConv) detector reads as u1, b1,
    u2, b2: not a chat log's tool calls and results (:func:`is_tool_turn`) nor its system or developer messages
    (:data:`INSTRUCTION_ROLES`). ``score --every-turn`` checks a Chinese log from the fourth of them on.

    >>> log = Dialogue.from_texts(["Answer in Chinese.", "天气？", "", '{"temp": 20}', "二十度。"],
    ...                           speakers=["system", "user", "assistant", "tool", "assistant"],
    ...                           meta={"tool_calls": (2,)})
    >>> conversation_turns(log)
    [1, 4]
    """
    return [i for i, out in enumerate(_left_out(d)) if not out]


def _said(d: Dialogue) -> list[int]:
    """The turns of ``d`` a Chinese detector reads (:func:`conversation_turns`); the last turn always."""
    n = len(d.turns)
    return [i for i, out in enumerate(_left_out(d)) if i == n - 1 or not out]


def chinese_reading(d: Dialogue) -> tuple[Dialogue, list[int] | None]:
    """``d`` as a Chinese (four-category, CDConv) detector reads it, and the index in ``d`` of each turn it holds
    (None when it is ``d`` itself): a chat log without its tool calls and tool results (:func:`is_tool_turn`) and its
    system or developer messages (:data:`INSTRUCTION_ROLES`), so that the turns read by position as u1, b1, u2, b2
    are the user's and the assistant's, as neither is ever read by the English detectors against the assistant's
    replies. The last turn is kept whatever it is: it is the one checked. :func:`renumbered` gives a verdict on the
    reading the indices of ``d``.

    >>> log = Dialogue.from_texts(["天气？", "", '{"temp": 20}', "二十度。"], speakers=["user", "assistant", "tool",
    ...                           "assistant"], meta={"tool_calls": (1,)})  # as parse_dialogue marks a tool call
    >>> read, where = chinese_reading(log)
    >>> [t.text for t in read.turns], where
    (['天气？', '二十度。'], [0, 3])
    """
    said = _said(d)
    if len(said) == len(d.turns):
        return d, None
    meta = {k: v for k, v in d.meta.items() if k != "tool_calls"}  # indices of d: its kept calls renumbered
    calls = set(d.meta.get("tool_calls", ()))
    if kept := tuple(k for k, i in enumerate(said) if i in calls):
        meta["tool_calls"] = kept
    return Dialogue(tuple(d.turns[i] for i in said), d.knowledge, meta), said


def renumbered(v: Verdict, where: Sequence[int] | None) -> Verdict:
    """A verdict on :func:`chinese_reading`'s dialogue with its turn indices (``evidence``, ``pair_scores``) those of
    the dialogue it was read from (``where[i]`` for turn ``i``); ``v`` itself when ``where`` is None."""
    if where is None:
        return v
    return dataclasses.replace(
        v,
        evidence=tuple(where[i] for i in v.evidence),
        pair_scores={where[i]: s for i, s in v.pair_scores.items()},
        read_as=None if v.read_as is None else {where[i]: s for i, s in v.read_as.items()},
    )


def dialogue_language(d: Dialogue) -> str:
    """``"zh"`` (every turn with letters is Chinese), ``"other"`` (none is), or ``"mixed"``.

    Turns without letters (numbers, emoji, "？？？") and turns in between the two thresholds do not vote, nor do
    a chat log's tool results (:func:`is_tool_turn`: JSON, in whatever language the tool answers) and its system or
    developer messages (:data:`INSTRUCTION_ROLES`: a Chinese chatbot's system prompt is often English); a dialogue
    with no voting turn counts as ``"other"``.

    >>> dialogue_language(Dialogue.from_texts(["You are a helpful assistant.", "你好", "你好！有什么事？"],
    ...                                       speakers=["system", "user", "assistant"]))
    'zh'
    """
    texts = [d.turns[i].text for i in conversation_turns(d)]
    langs = [x for x in _turn_languages(texts) if x != "unknown"]
    if not langs:
        return "other"
    if all(x == "zh" for x in langs):
        return "zh"
    if all(x == "other" for x in langs):
        return "other"
    return "mixed"


_SCRIPTS = {"CJK": "Chinese", "HIRAGANA": "Japanese", "KATAKANA": "Japanese", "KATAKANA-HIRAGANA": "Japanese"}
_SCRIPTS["HANGUL"] = "Korean"


@functools.lru_cache(maxsize=8192)
def _letter_script(ch: str) -> str | None:
    """The script of a letter by its Unicode name ("Chinese", "Japanese" for kana, "Korean", "Cyrillic", ...);
    None for a Latin letter, accented or not, and for a modifier letter (an apostrophe-like mark)."""
    words = unicodedata.name(ch, "").split()
    if words and words[0] in ("FULLWIDTH", "HALFWIDTH"):
        words = words[1:]
    if not words or words[0] in ("LATIN", "MODIFIER"):
        return None
    return _SCRIPTS.get(words[0], words[0].title())


def turn_script(text: str) -> str | None:
    """The script most of the letters of ``text`` are written in when it is not the Latin script of English:
    ``"Chinese"`` (CJK ideographs), ``"Japanese"`` (kana, with or without kanji), ``"Korean"`` (Hangul), else the
    Unicode script's name (``"Cyrillic"``, ``"Arabic"``, ``"Greek"``, ...). None for Latin text (a few accented
    words or a foreign name in an English turn included) and for text without letters (numbers, emoji).

    >>> turn_script("我养了一只狗。"), turn_script("犬を飼っています。"), turn_script("Привет, как дела?")
    ('Chinese', 'Japanese', 'Cyrillic')
    >>> turn_script("I had a café crème in Zürich 😀"), turn_script("I met Сергей there."), turn_script("42!")
    (None, None, None)
    """
    if text.isascii():  # Latin letters or none: most turns of an English log, read without a call per character
        return None
    scripts: Counter[str] = Counter()
    latin = 0
    for ch in text:
        if ch < "\x80":  # an ASCII letter is Latin (and no modifier); anything else ASCII is no letter
            latin += ch.isalpha()
            continue
        if not unicodedata.category(ch).startswith("L"):
            continue
        script = _letter_script(ch)
        if script is None:
            latin += unicodedata.category(ch) != "Lm"  # a Latin letter (not a modifier such as ʼ)
        else:
            scripts[script] += 1
    other = sum(scripts.values())
    if not other or other < ZH_SHARE * (other + latin):
        return None
    return "Japanese" if "Japanese" in scripts else scripts.most_common(1)[0][0]


def foreign_turns(d: Dialogue, language: str, same_speaker: bool = True) -> list[int]:
    """The turns of ``d`` that a detector trained on ``language`` (``"en"``: English, ``"zh"``: Chinese) was not
    trained to read: for ``"en"``, the turns mostly in another script than Latin (Chinese, Japanese, Korean,
    Cyrillic, Arabic, ...: see :func:`turn_script`; English in Latin letters with a few accented words or emoji
    is read); for ``"zh"``, the turns in another script (a short "OK" or "haha" in a Chinese conversation does not
    count, as in :func:`dialogue_language`). A chat log's tool results and system or developer messages are not
    counted where the detector does not read them: never by a Chinese one (:func:`chinese_reading`), and by an English
    one only when the checked (last) turn is of their speaker, which it is read against (a Chinese system prompt
    above an English chat, a Chinese tool result before the assistant's English reply, is not read). That is how the
    shipped English detectors read (each earlier turn of the checked turn's speaker); for one that reads the other
    speakers' turns too (an unstructured detector, ``options.speakers: "all"``: :func:`~dialcheck.api.reads_others`)
    pass ``same_speaker=False`` and every turn counts.

    >>> foreign_turns(Dialogue.from_texts(["Do you have a dog?", "我养了一只狗。", "Да, у меня собака."]), "en")
    [1, 2]
    >>> log = Dialogue.from_texts(["只用中文回答。", "Hi", "Hello"], speakers=["system", "user", "assistant"])
    >>> foreign_turns(log, "en"), foreign_turns(log, "en", same_speaker=False)
    ([], [0])
    >>> foreign_turns(Dialogue.from_texts(["你有狗吗？", "OK", "I have a dog."]), "zh")
    [2]
    """
    if language == "en":  # the shipped English detectors read the last turn against the earlier turns of its speaker
        last = d.turns[-1].speaker if d.turns else None
        read = [not same_speaker or not out or t.speaker == last for t, out in zip(d.turns, _left_out(d), strict=True)]
        return [i for i, t in enumerate(d.turns) if read[i] and turn_script(t.text) is not None]
    said = _said(d)  # a tool call or result is not read by a Chinese detector (chinese_reading)
    return [said[k] for k, x in enumerate(_turn_languages([d.turns[i].text for i in said])) if x == "other"]


def foreign_scripts(dialogues: Iterable[Dialogue], language: str, same_speaker: bool = True) -> list[str]:
    """The scripts (:func:`turn_script`) of the turns of ``dialogues`` that a detector trained on English does not
    read, each once in order of appearance, for a warning to name them; [] for ``language`` ``"zh"``.
    ``same_speaker``: as in :func:`foreign_turns`.

    >>> foreign_scripts([Dialogue.from_texts(["Hi!", "안녕하세요", "你好", "안녕"])], "en")
    ['Korean', 'Chinese']
    """
    if language != "en":
        return []
    found = [turn_script(d.turns[i].text) for d in dialogues for i in foreign_turns(d, language, same_speaker)]
    return list(dict.fromkeys(s for s in found if s is not None))


def is_chinese(d: Dialogue) -> bool:
    """True when the dialogue is Chinese (see :func:`dialogue_language`)."""
    return dialogue_language(d) == "zh"


def check_not_japanese(d: Dialogue, choose: str = CHOOSE_MODEL) -> None:
    """Raise :class:`InputError` naming the turns with kana: Japanese, which no shipped detector reads (its kanji
    would otherwise pass for Chinese, its kana for another script). A chat log's tool results and system or developer
    messages are not looked at, as they cast no vote on its language (:func:`conversation_turns`): a weather tool's
    ``{"天気": "晴れ"}`` or a Japanese system prompt does not make an English or Chinese chat Japanese. ``choose``: how
    the caller picks a model of its own (:data:`CHOOSE_MODEL`, the library's; ``"pass --model"`` on the command
    line).

    >>> check_not_japanese(Dialogue.from_texts(["名前は？", "田中です。"]), "pass --model")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: turns [0, 1] are Japanese (they have kana): no shipped detector reads Japanese; \
pass --model to choose one
    """
    kana = [i for i in conversation_turns(d) if _has_kana(d.turns[i].text)]
    if kana:
        raise InputError(
            f"turns {kana} are Japanese (they have kana): no shipped detector reads Japanese; {choose} to choose one"
        )


def turn_field(d: Dialogue, i: int) -> str:
    """How an error names the text of turn ``i`` of ``d``: as the file gave it, ``messages[i].content`` for a
    dialogue read from chat-completion messages (:func:`~dialcheck.io.parse_dialogue` marks it in ``meta``), else
    ``turns[i].text``.

    >>> turn_field(Dialogue.from_texts(["Hi", ""]), 1), turn_field(Dialogue((), meta={"turns_key": "messages"}), 1)
    ('turns[1].text', 'messages[1].content')
    """
    if d.meta.get("turns_key") == "messages":
        return f"messages[{i}].content"
    return f"turns[{i}].text"


def chinese_turns_lacking(n: int, refused: bool = True) -> str | None:
    """What a Chinese conversation of ``n`` turns lacks to be read as u1, b1, u2, b2, as ``check`` refuses it
    (``refused``) and ``evaluate --data`` warns of it, scoring it all the same: three turns want u1, one or two are
    too few (to check, when refused); None from four turns on.

    >>> chinese_turns_lacking(3), chinese_turns_lacking(2), chinese_turns_lacking(1), chinese_turns_lacking(4)
    ('got 3 turns; is u1 missing?', 'got 2 turns: too few to check', 'got 1 turn: too few to check', None)
    >>> chinese_turns_lacking(2, refused=False), chinese_turns_lacking(3, refused=False)
    ('got 2 turns', 'got 3 turns; is u1 missing?')
    """
    if n >= 4:
        return None
    if n == 3:
        return "got 3 turns; is u1 missing?"
    return f"got {n} turn{'' if n == 1 else 's'}" + (": too few to check" if refused else "")


def _left_out_words(d: Dialogue, said: Sequence[int]) -> str:
    """What the Chinese reading of ``d`` (the turns ``said``) leaves out, for :func:`chinese_lacking`: "tool calls and
    results", "system message", "system and developer messages", or two of these joined by "and"."""
    kept = set(said)
    left = [i for i in range(len(d.turns)) if i not in kept]
    told = [d.turns[i] for i in left if not is_tool_turn(d, i)]  # a chat's instructions: INSTRUCTION_ROLES
    parts = []
    if told:
        roles = " and ".join(dict.fromkeys(t.speaker for t in told))
        parts.append(f"{roles} message{'s' if len(told) > 1 else ''}")
    if len(told) < len(left):
        parts.append("tool calls and results")
    return " and ".join(parts)


def chinese_lacking(d: Dialogue, refused: bool = True) -> str | None:
    """What ``d`` lacks to be read as u1, b1, u2, b2 (:func:`chinese_turns_lacking`), its turns counted as the
    Chinese detector reads them (:func:`chinese_reading`: without a chat log's tool calls and results and its system
    or developer messages, which the words then name), as ``check`` refuses it (``refused``) and ``evaluate --data``
    warns of it; None when it has four turns or more.

    >>> log = Dialogue.from_texts(["Be brief.", "我养了猫。", "真好。", "你呢？"], ["system", "user", "assistant",
    ...                           "user"])
    >>> chinese_lacking(log)
    'got 3 turns besides its system message; is u1 missing?'
    """
    said = _said(d)
    lacking = chinese_turns_lacking(len(said), refused)
    if lacking and len(said) < len(d.turns):  # "got 3 turns besides its tool calls and results; is u1 missing?"
        head = f"got {len(said)} turn{'' if len(said) == 1 else 's'}"
        lacking = f"{head} besides its {_left_out_words(d, said)}{lacking[len(head) :]}"
    return lacking


def check_chinese_last_turn(d: Dialogue, choose: str = CHOOSE_MODEL) -> None:
    """Raise :class:`InputError` when the last turn of ``d`` is one a Chinese (four-category) detector does not read
    (:func:`chinese_reading`): a chat log's tool result, tool call, or system or developer message. The advice says
    how the caller (``choose``, as in :func:`check_not_japanese`) checks the assistant's last reply instead
    (:data:`CHECK_ASSISTANT`). Both ways to a Chinese detector go through it: :func:`check_chinese_conversation`
    (routing) and the detector's ``predict`` (a Chinese ``--model``, ``dialcheck.load(...).predict``).

    >>> log = Dialogue.from_texts(["天气？", '{"temp": 20}'], ["user", "tool"], meta={"turns_key": "messages"})
    >>> check_chinese_last_turn(log)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: messages[1]: the last turn is a tool message, a tool's result, which the Chinese \
detector does not read (it reads the user's and the assistant's turns as u1, b1, u2, b2); speaker="assistant" \
(dialcheck.check(..., speaker=...)), or "speaker": "assistant" in the dialogue object, checks the assistant's last \
reply
    """
    n = len(d.turns)
    if not n or not _left_out(d)[-1]:
        return
    last = d.turns[-1].speaker
    what = (
        "a tool's result"
        if last in TOOL_ROLES
        else "a tool call"
        if is_tool_turn(d, n - 1)
        else "the chat's instructions"
    )
    advice = CHECK_ASSISTANT.get(choose, CHECK_ASSISTANT_LIBRARY)
    raise InputError(
        f"{turn_field(d, n - 1).rsplit('.', 1)[0]}: the last turn is a {last} message, {what}, which the Chinese "
        f"detector does not read (it reads the user's and the assistant's turns as u1, b1, u2, b2); {advice} checks "
        "the assistant's last reply"
    )


def check_chinese_conversation(d: Dialogue, choose: str = CHOOSE_MODEL) -> None:
    """Raise :class:`InputError` when ``d`` cannot be checked as a Chinese conversation (u1, b1, u2, b2, ...):
    mixed languages, an empty turn, fewer than four turns, or a last turn the Chinese detector does not read (a
    tool's result, a chat's system message), each once a chat log's tool calls and results and its system or
    developer messages are left out (:func:`chinese_reading`). ``choose``: as in :func:`check_not_japanese`.

    >>> check_chinese_conversation(Dialogue.from_texts(["我养了猫。", "真好。", "你呢？"]))
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: a Chinese conversation is checked as u1 (user), b1 (bot), u2 (user), b2 (bot): \
got 3 turns; is u1 missing?
    """
    check_chinese_last_turn(d, choose)
    said = _said(d)  # without a chat log's tool calls and results and its system messages, as the detector reads it
    langs = _turn_languages([d.turns[i].text for i in said])
    if "zh" in langs and "other" in langs:
        zh = [said[k] for k, x in enumerate(langs) if x == "zh"]
        other = [said[k] for k, x in enumerate(langs) if x == "other"]
        check_not_japanese(d, choose)
        raise InputError(
            f"the dialogue mixes Chinese turns {zh} with non-Chinese turns {other}: no default detector covers "
            f"mixed languages; {choose} to choose one"
        )
    for i in said:
        if not d.turns[i].text.strip():
            hint = ""  # until 2026-12-03 an empty assistant turn counted as a tool call: say how to mark one
            if d.turns[i].speaker == "assistant" and "turns_key" not in d.meta:  # a Dialogue built in Python
                hint = f'; a tool call is marked by its index: Dialogue(..., meta={{"tool_calls": ({i},)}})'
            elif d.turns[i].speaker == "assistant" and d.meta["turns_key"] != "messages":  # a record's "turns"
                hint = (
                    '; a tool call is marked as a chat log marks it: write the chat as "messages", the call as '
                    '{"role": "assistant", "content": null, "tool_calls": [...]}'
                )
            raise InputError(
                f"{turn_field(d, i)}: empty turn: every turn of a Chinese conversation needs text (the Chinese "
                "detector reads turns by position as u1, b1, u2, b2; a chat log's tool calls and results are left "
                f"out, not other turns without text{hint})"
            )
    lacking = chinese_lacking(d)
    if lacking:
        raise InputError(f"a Chinese conversation is checked as u1 (user), b1 (bot), u2 (user), b2 (bot): {lacking}")
