"""CDConv trigger methods (Zheng et al. 2022): build a second user turn ``u2`` that goads a chatbot into
contradicting itself, from a first user turn ``u1`` and the bot's reply ``b1``.

Methods (names as in :data:`METHODS`; the corpus' own names in parentheses):

- ``short_utterance`` (短句): a short, content-free utterance such as "嗯嗯" or "真的吗？";
- ``inquire_bot`` (设问-bot): a question about what the bot said in ``b1``;
- ``inquire_user`` (设问-user): a question about what the user said in ``u1``, put to the bot in the
  "你知道…吗" form (设问-user-v2) unless ``know_form=False``;
- ``paraphrase`` (同义-回译): ``u1`` said again in other words, by a pluggable :class:`Paraphraser`
  (default: synonym substitution; :class:`BackTranslationParaphraser` wraps a user-supplied translator); a
  paraphrase that repeats another method's u2 for the context (the default's, where u1 has one word to replace, is
  the synonym trigger) is left out, counted as ``paraphrase: same u2 as synonym`` (:func:`same_u2`);
- ``synonym`` / ``antonym`` / ``negation`` (同义-同义词, 反义-反义词, 反义-否定词): ``u1`` with one word replaced by
  a synonym or an antonym, or with a negation added or removed, using the Chinese dictionary.

Questions are built by rule: entities (nouns, names, numbers) come from ``jieba`` part-of-speech tags,
the entity is replaced by a question word (什么, or 多少/几 for numbers), first and second person are
swapped for questions about the bot, and the sentence ends with "？". Every method takes a
``random.Random``; :func:`build_triggers` seeds one per input and method, so the output depends only on
the input, the method and the seed. ``jieba`` is the ``zh`` extra (``pip install "dialcheck[zh]"``).
English counterparts (WordNet, spaCy): :mod:`dialcheck.probes.triggers_en`, ``build_triggers(..., language="en")``.

>>> know_form("我看了什么电影？")
'你知道我看了什么电影吗？'
>>> swap_person("我是做什么的，你呢")
'你是做什么的，我呢'
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InputError, MissingDependencyError
from ..io import decode_utf8, write_jsonl
from ..schema import Dialogue, Turn

if TYPE_CHECKING:
    from .triggers_en import EnglishLexicon

__all__ = [
    "BATCH_SIZE",
    "METHODS",
    "SHORT_UTTERANCES",
    "BackTranslationParaphraser",
    "ChineseLexicon",
    "Paraphraser",
    "SynonymParaphraser",
    "Trigger",
    "TriggerInput",
    "TriggerSet",
    "build_triggers",
    "count_skips",
    "flip_polarity",
    "inquire_bot",
    "inquire_user",
    "know_form",
    "negation",
    "paraphrase",
    "perturb",
    "run_methods",
    "same_u2",
    "short_utterance",
    "swap_person",
    "swap_word",
    "trigger_batches",
    "trigger_tables",
]

log = logging.getLogger(__name__)

#: contexts per batch of :func:`trigger_batches` (``probe triggers --batch-size``)
BATCH_SIZE = 64
METHODS = ("short_utterance", "inquire_bot", "inquire_user", "paraphrase", "synonym", "antonym", "negation")
CORPUS_NAMES = {
    "short_utterance": "短句",
    "inquire_bot": "设问-bot",
    "inquire_user": "设问-user-v2",
    "paraphrase": "同义-回译",
    "synonym": "同义-同义词",
    "antonym": "反义-反义词",
    "negation": "反义-否定词",
}
# Frequent short second turns of the corpus' 短句 sessions, and a few common ones of the same kind.
SHORT_UTTERANCES = (
    "嗯",
    "嗯嗯",
    "哦",
    "哦哦",
    "是吗",
    "真的吗？",
    "然后呢？",
    "为什么？",
    "哈哈",
    "啊哈哈",
    "好吧",
    "对",
    "嗯呢",
    "诶呀",
    "哎呦",
    "嗨",
    "？？？",
    "……",
    "好呀",
    "对了",
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_END = "。！？!?.~～…，,、；; "
_ENTITY_FLAGS = ("n", "nr", "ns", "nt", "nz", "nw", "vn", "an", "m")
_STOP = frozenset({"东西", "时候", "事情", "样子", "什么", "怎么", "时间", "人", "事"})
_CN_NUM = "一二两三四五六七八九十百千万几"
_NOT_COUNTS = frozenset(
    ["一下", "一些", "一点", "一点点", "一起", "一直", "一样", "一般", "一切", "一共", "一定", "一会", "一会儿", "一边"]
)
_WH_WORDS = ("什么", "怎么", "怎样", "哪", "谁", "几", "多少", "为什么", "啥", "为啥", "多大", "多久")
_CLAUSE_END = re.compile(r"(?<=[，,。！!？?；;~～…])")
_FIXED_NEGATIONS = ("没问题", "没关系", "没事", "不客气", "不好意思", "不错", "看来", "看样子", "原来", "听说")
_LEADING_LINKS = re.compile(r"^(所以|但是|因为|不过|而且|然后|可是|其实|那么|那|就是|还有|另外|对了|嗯+|哦+|啊+)")
_DICT = "chinese_dictionary"


def _jieba() -> Any:
    """``jieba.posseg``, imported lazily (the ``zh`` extra)."""
    try:
        import jieba
        import jieba.posseg as pseg
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("jieba", "zh", "Chinese word segmentation (trigger methods)") from None
    jieba.setLogLevel(60)
    return pseg


def words(text: str) -> list[tuple[str, str]]:
    """(word, part-of-speech flag) pairs of ``text`` from jieba."""
    return [(w.word, w.flag) for w in _jieba().cut(text)]


# -- records ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerInput:
    """A context to extend: the user's first turn and, when known, the bot's reply."""

    u1: str
    b1: str = ""
    id: str = ""


@dataclass(frozen=True)
class Trigger:
    """A built probing input (u1, b1, u2): send u2 to the bot after u1 and b1, then check its reply."""

    u1: str
    b1: str
    u2: str
    method: str
    detail: str = ""
    id: str = ""

    def dialogue(self) -> Dialogue:
        """The context as a :class:`Dialogue` (user, bot, user); append the bot's reply to check it."""
        turns = [Turn("user", self.u1), Turn("bot", self.b1), Turn("user", self.u2)] if self.b1 else []
        return Dialogue(tuple(turns) or (Turn("user", self.u1), Turn("user", self.u2)))

    def to_dict(self) -> dict[str, str]:
        return {
            "id": self.id,
            "u1": self.u1,
            "b1": self.b1,
            "u2": self.u2,
            "method": self.method,
            "corpus_method": CORPUS_NAMES.get(self.method, self.method),
            "detail": self.detail,
        }


@dataclass
class TriggerSet:
    """Built triggers and why inputs were skipped (method: reason -> count)."""

    items: list[Trigger] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def counts(self) -> dict[str, int]:
        return dict(Counter(t.method for t in self.items))

    def add(self, other: TriggerSet) -> TriggerSet:
        """Take in the triggers and skips of ``other`` (a later batch); returns self."""
        self.items.extend(other.items)
        self.skipped.update(other.skipped)
        return self

    def save(self, path: str | Path) -> None:
        """Write the triggers as JSONL ("-": standard output)."""
        write_jsonl(path, (t.to_dict() for t in self.items))


# -- lexicon ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChineseLexicon:
    """Synonyms (Cilin ``=`` groups), antonym pairs and single-character negators.

    >>> lex = ChineseLexicon.from_lines(["Gb09A01= 喜欢 喜爱"], ["喜欢——讨厌"], ["不\\t0\\t2"])
    >>> lex.synonyms["喜欢"], lex.antonyms["讨厌"], lex.negators
    (('喜爱',), ('喜欢',), ('不',))
    """

    synonyms: dict[str, tuple[str, ...]]
    antonyms: dict[str, tuple[str, ...]]
    negators: tuple[str, ...]

    @classmethod
    def from_lines(
        cls, synonym_lines: Iterable[str], antonym_lines: Iterable[str], negative_lines: Iterable[str] = ()
    ) -> ChineseLexicon:
        syn: dict[str, dict[str, None]] = {}
        for line in synonym_lines:
            head, _, rest = line.strip().partition(" ")
            if not head.endswith("="):
                continue  # '#' related, '@' single: not synonyms
            group = [w for w in rest.split() if w]
            for w in group:
                syn.setdefault(w, {}).update({o: None for o in group if o != w})
        ant: dict[str, dict[str, None]] = {}
        for line in antonym_lines:
            parts = [re.sub(r"[^\u4e00-\u9fff]", "", p) for p in re.split(r"[-—─―]+", line.strip())]
            parts = [p for p in parts if p]
            if len(parts) != 2 or parts[0] == parts[1]:
                continue
            a, b = parts
            ant.setdefault(a, {})[b] = None
            ant.setdefault(b, {})[a] = None
        neg = []
        for line in negative_lines:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 2 and cols[1].strip() == "0" and cols[0].strip():
                neg.append(cols[0].strip())
        return cls(
            {w: tuple(o) for w, o in syn.items() if o},
            {w: tuple(o) for w, o in ant.items()},
            tuple(dict.fromkeys(neg)),
        )

    @classmethod
    def load(cls, folder: str | Path | None = None) -> ChineseLexicon:
        """The dictionary from ``folder`` (default: ``chinese_dictionary`` in the data directory)."""
        if folder is None:
            from ..datasets.base import data_dir

            folder = data_dir() / _DICT
        root = Path(folder)
        files = {n: root / f"dict_{n}.txt" for n in ("synonym", "antonym", "negative")}
        for f in files.values():
            if not f.is_file():
                raise InputError("Chinese dictionary file is missing (pass --dict-dir)", str(f))

        def lines(p: Path) -> list[str]:  # a GBK copy (as Cilin often is) was a UnicodeDecodeError traceback
            return decode_utf8(p.read_bytes(), str(p)).splitlines()

        lex = cls.from_lines(lines(files["synonym"]), lines(files["antonym"]), lines(files["negative"]))
        for kind, found, form in (
            ("synonym", lex.synonyms, "Aa01A01= 人 士 人物"),
            ("antonym", lex.antonyms, "冷——热"),
            ("negative", lex.negators, "不<TAB>0<TAB>2"),
        ):
            if not found:  # else every synonym, antonym or negation trigger is silently "nothing to change"
                raise InputError(f"no entries in it (lines like '{form}'): not a Chinese dictionary", str(files[kind]))
        return lex


# -- helpers ------------------------------------------------------------------------------------------


def swap_person(text: str) -> str:
    """First and second person swapped (我 <-> 你, 我们 <-> 你们): the bot's words put back to it."""
    return re.sub(r"我|你|您", lambda m: "你" if m.group(0) == "我" else "我", text)


def know_form(question: str) -> str:
    """The "你知道…吗" modification of a question (设问-user-v2): the bot is asked whether it knows.

    >>> know_form("你知道我多大了吗？")
    '你知道我多大了吗？'
    """
    q = question.strip().rstrip(_END)
    if q.startswith("你知道"):
        return q + ("" if q.endswith("吗") else "吗") + "？"
    q = q[:-1] if q.endswith("吗") else q
    return f"你知道{q}吗？"


def _question_word(word: str, flag: str, after: str = "") -> str:
    if (flag == "m" or re.fullmatch(r"[0-9０-９.]+", word)) and after[:1] == "点":
        return "几"  # 11点 -> 几点 (o'clock), not 多少点
    if re.fullmatch(r"[0-9０-９]+", word) and after in ("了", "啦", ""):
        return "多大"  # 我也27了 -> 你也多大了 (an age), not 多少了
    if flag == "ns":
        return "哪里"  # 我是山东德州的 -> 我是山东哪里的
    if flag in ("n", "ns", "nr") and len(word) >= 3 and word.endswith("人"):
        return "哪里人"  # 我是湖南人 -> 我是哪里人
    if flag == "nr":
        return "谁"  # 我最喜欢的运动员是姚明 -> 是谁
    if flag == "m" or re.fullmatch(r"[0-9０-９.]+", word):
        if re.match(r"[0-9０-９]", word):
            return "多少" + re.sub(r"^[0-9０-９.]+", "", word)
        if word and word[0] in _CN_NUM:
            return "几" + word.lstrip(_CN_NUM)
        return "多少"
    return "什么"


def entities(text: str) -> list[tuple[int, str, str]]:
    """(word index, word, flag) of the nouns, names and numbers of ``text`` (jieba tags)."""
    return _entities(words(text))


def _entities(ws: Sequence[tuple[str, str]]) -> list[tuple[int, str, str]]:
    out = []
    for i, (w, f) in enumerate(ws):
        if f not in _ENTITY_FLAGS or w in _STOP or w.startswith("几"):
            continue
        if f == "m" and (not (re.search(r"\d", w) or w[0] in _CN_NUM) or w in _NOT_COUNTS):
            continue  # a bare measure word (岁, 张) is not a number, nor is 一下 or 一些
        if _CJK.search(w) or re.search(r"\d", w):
            out.append((i, w, f))
    return out


def _is_question(clause: str) -> bool:
    return bool(re.search(r"[?？]\s*$|吗\s*[?？。!！]?\s*$", clause)) or any(w in clause for w in _WH_WORDS)


def _wh_question(text: str, rng: random.Random, bot: bool) -> tuple[str, str] | None:
    """``text`` with one entity replaced by a question word; (question, entity) or None.

    Only the last entity of a clause that is a statement with a subject (我: the speaker's own words) is
    asked for, and the question keeps that clause only: "我喜欢狗，我家有三条狗。" -> "我家有几条狗？"."""
    ws = words(text)
    ends = [n for n, (w, _) in enumerate(ws) if w and w[-1] in "，,。！!？?；;~～…"]
    ents = _entities(ws)  # one segmentation for the words and their entities
    options = []
    for i, word, flag in ents:
        start = max([n + 1 for n in ends if n < i], default=0)
        stop = min([n for n in ends if n > i], default=len(ws))
        clause_words = [w for w, _ in ws[start:stop]]
        clause = "".join(clause_words)
        if _is_question(clause + ("".join(w for w, _ in ws[stop : stop + 1]))) or "我" not in clause:
            continue
        if len(word) < 2 and flag != "m":
            continue  # one-character nouns are often jieba's splits (哈喽 -> 哈 / 喽)
        if flag in ("vn", "an"):
            continue  # a verbal noun stands where the verb is: 我在北京读书 -> 我在北京什么
        before = ws[i - 1][0] if i > start else ""
        if flag == "m" and word.startswith("一") and before.endswith(("是", "当", "做", "成为", "作为")):
            continue  # 我还是一个学生: an article, not a count (几个学生)
        later = [k for k, w, f in ents if i < k < stop and f not in ("vn", "an", "m") and len(w) >= 2]
        if later and flag not in ("m", "ns"):
            continue  # ask for the last noun of the clause (我最喜欢的篮球运动员是姚明 -> 姚明), a count or a place
        after = ws[i + 1][0] if i + 1 < stop else ""
        out = clause_words[:]
        out[i - start] = _question_word(word, flag, after)
        if after == "多" and flag == "m":  # 60多岁 -> 多少岁, 60多了 -> 多大了 (not 多少多)
            out[i + 1 - start] = ""
            if not (i + 2 < stop and ws[i + 2][0].startswith("岁")):
                out[i - start] = "多大"
        q = _LEADING_LINKS.sub("", "".join(out).strip())
        q = re.sub(r"[吧呢啊呀嘛哦]+$", "", q)
        if not q.startswith(("我", "你")) or len(q) < 4:
            continue  # no subject left (照顾我的两个女儿), or too short to ask anything
        options.append((swap_person(q) if bot else q, word, flag))
    if not options:
        return None
    counts = [o for o in options if o[2] == "m"]  # 我儿子也两岁了: ask 几岁, not 什么也两岁
    q, word, _ = rng.choice(counts or options)
    return q + "？", word


# -- methods ------------------------------------------------------------------------------------------


def short_utterance(inp: TriggerInput, rng: random.Random, pool: Sequence[str] = SHORT_UTTERANCES) -> Trigger:
    """u2 is a short content-free utterance drawn from ``pool``."""
    u2 = rng.choice(list(pool))
    return Trigger(inp.u1, inp.b1, u2, "short_utterance", "", inp.id)


def inquire_bot(inp: TriggerInput, rng: random.Random) -> Trigger | None:
    """u2 asks the bot about an entity of its own reply ``b1`` (persons swapped); None without b1 or entity."""
    if not inp.b1.strip():
        return None
    q = _wh_question(inp.b1, rng, bot=True)
    if q is None:
        return None
    return Trigger(inp.u1, inp.b1, q[0], "inquire_bot", q[1], inp.id)


def inquire_user(inp: TriggerInput, rng: random.Random, know: bool = True) -> Trigger | None:
    """u2 asks the bot about an entity of the user's own ``u1`` (which must speak of 我), by default as
    "你知道…吗"."""
    if "我" not in inp.u1:
        return None
    q = _wh_question(inp.u1, rng, bot=False)
    if q is None:
        return None
    return Trigger(inp.u1, inp.b1, know_form(q[0]) if know else q[0], "inquire_user", q[1], inp.id)


class Paraphraser(Protocol):
    """Anything that rewrites a sentence with the same meaning; returns None when it cannot."""

    name: str

    def paraphrase(self, text: str, rng: random.Random) -> str | None:
        """A paraphrase of ``text``, or None."""


_TABLES: dict[int, tuple[ChineseLexicon, dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]] = {}
# words whose dictionary antonym is wrong in chat: 是 -> 否/非 ("你家否什么品种的狗"), 还 -> 该, 平常 -> 异常
_ANTONYM_SKIP = frozenset(["是", "还", "就", "都", "也", "才", "再", "又", "平常", "平时", "一直"])
# one-character antonyms are mostly wrong in chat (多大 -> 多小, 恩 -> 仇, 好的 -> 坏的, 戴强 -> 戴弱): only these
_ONE_CHAR_OPPOSITES = frozenset(["有", "没", "无", "买", "卖"])


def trigger_tables(lexicon: ChineseLexicon) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """The synonyms and antonyms the trigger methods use: Cilin's groups are loose (是 -> 头头是道, 听 ->
    经纶, 妈妈 -> 鸨儿), so a synonym must have two characters or more, share one with the word, differ
    in length by one at most, be at least a tenth as frequent in jieba's dictionary and have the same part
    of speech there (喜欢 -> 喜爱, not -> 撒欢 or 欢乐; 工作 not -> 劳作); antonyms skip the copula and
    function adverbs and need two characters on both sides (有 <-> 没, 买 <-> 卖 excepted).

    >>> lex = ChineseLexicon.from_lines(["A= 喜欢 喜爱 欢 爱好", "B= 是 头头是道"], ["是--否", "喜欢--讨厌"])
    >>> syn, ant = trigger_tables(lex)
    >>> syn["喜欢"], "是" in syn, "是" in ant, ant["喜欢"]
    (('喜爱',), False, False, ('讨厌',))
    """
    cached = _TABLES.get(id(lexicon))
    if cached is None or cached[0] is not lexicon:
        pseg = _jieba()
        pseg.dt.tokenizer.initialize()
        freq = pseg.dt.tokenizer.FREQ  # jieba's word counts: 工作 66,367, 劳作 285
        tags = pseg.dt.word_tag_tab  # jieba's part of speech of each word: 喜欢 v, 欢乐 a

        def close(w: str, o: str) -> bool:
            common = freq.get(o, 0) >= 0.1 * freq.get(w, 0)  # not a rare or bookish word (业经, 撒欢)
            same_pos = tags.get(w) is not None and tags.get(w) == tags.get(o)  # not 喜欢 -> 欢乐, 朋友 -> 友好
            shape = len(w) >= 2 and len(o) >= 2 and abs(len(w) - len(o)) <= 1 and bool(set(w) & set(o))
            return shape and common and same_pos

        syn = {w: c for w, os in lexicon.synonyms.items() if (c := tuple(o for o in os if close(w, o)))}

        def opposite(w: str, o: str) -> bool:
            return min(len(w), len(o)) >= 2 or (w in _ONE_CHAR_OPPOSITES and o in _ONE_CHAR_OPPOSITES)

        ant = {
            w: c
            for w, os in lexicon.antonyms.items()
            if w not in _ANTONYM_SKIP and (c := tuple(o for o in os if opposite(w, o)))
        }
        cached = _TABLES[id(lexicon)] = (lexicon, syn, ant)
    return cached[1], cached[2]


class SynonymParaphraser:
    """Paraphrase by replacing up to ``max_words`` words that have close dictionary synonyms (the default;
    :func:`trigger_tables`)."""

    name = "synonym"

    def __init__(self, lexicon: ChineseLexicon, max_words: int = 2) -> None:
        self.lexicon = lexicon
        self.max_words = max_words

    def paraphrase(self, text: str, rng: random.Random) -> str | None:
        table = trigger_tables(self.lexicon)[0]
        ws = words(text)
        cands = [i for i, (w, f) in enumerate(ws) if w in table and f[:1] in "nvad" and w not in _STOP]
        if not cands:
            return None
        picked = rng.sample(cands, min(self.max_words, len(cands)))
        out = [w for w, _ in ws]
        for i in sorted(picked):
            out[i] = rng.choice(table[out[i]])
        return "".join(out)


class BackTranslationParaphraser:
    """Paraphrase by translating to a pivot language and back with a user-supplied ``translate``.

    ``translate(texts, source, target)`` returns one translation per text (wrap any MT model, e.g. a
    local MarianMT pair). Returns None when the round trip gives the same sentence or nothing.

    >>> table = {"你几岁？": "How old are you?", "How old are you?": "你多大了？"}
    >>> bt = BackTranslationParaphraser(lambda texts, s, t: [table[x] for x in texts])
    >>> bt.paraphrase("你几岁？", random.Random(0))
    '你多大了？'
    """

    name = "back_translation"

    def __init__(
        self, translate: Callable[[list[str], str, str], list[str]], source: str = "zh", pivot: str = "en"
    ) -> None:
        self.translate = translate
        self.source = source
        self.pivot = pivot

    def paraphrase(self, text: str, rng: random.Random) -> str | None:
        mid = self.translate([text], self.source, self.pivot)
        back = self.translate(list(mid), self.pivot, self.source)
        out = back[0].strip() if back else ""
        return out if out and out != text.strip() else None


def paraphrase(inp: TriggerInput, rng: random.Random, paraphraser: Paraphraser) -> Trigger | None:
    """u2 repeats u1 in other words (the bot should answer as before)."""
    u2 = paraphraser.paraphrase(inp.u1, rng)
    if not u2 or u2 == inp.u1:
        return None
    return Trigger(inp.u1, inp.b1, u2, "paraphrase", paraphraser.name, inp.id)


def perturb(inp: TriggerInput, rng: random.Random, lexicon: ChineseLexicon, kind: str) -> Trigger | None:
    """u2 is u1 with one word replaced by a ``synonym`` or an ``antonym`` from the dictionary
    (:func:`trigger_tables`)."""
    syn, ant = trigger_tables(lexicon)
    table = {"synonym": syn, "antonym": ant}[kind]
    swapped = swap_word(inp.u1, rng, table)
    if swapped is None:
        return None
    return Trigger(inp.u1, inp.b1, swapped[0], kind, swapped[1], inp.id)


def negation(inp: TriggerInput, rng: random.Random, lexicon: ChineseLexicon | None = None) -> Trigger | None:
    """u2 is u1 with the polarity of one clause flipped by :func:`flip_polarity` (a negation taken out or
    put in by rules that keep the clause grammatical). The clause is the first statement that speaks of
    a person (我, 你, 他, 她), else the first statement, else the first yes/no question (你有宠物吗？ ->
    你没有宠物吗？); wh-questions are never edited (你是做什么的 -> 你是不做什么的 says nothing).
    ``lexicon`` is not used (kept for the common signature)."""
    clauses = [c for c in _CLAUSE_END.split(inp.u1) if c]

    def flipped(k: int) -> str | None:
        c = clauses[k]
        body = c.rstrip(_END)
        tail = c[len(body) :]
        if any(w in body for w in _WH_WORDS) or not _CJK.search(body):
            return None
        content = re.sub(r"[的啊呀吧哦呢嘛哈嗯\s]", "", body)
        if len(content) <= 2 or content.startswith(_FIXED_NEGATIONS):
            return None  # 好的, 是的, 没事, 不错: an answer or an idiom, not a claim to flip
        core = body[:-1] if body.endswith("吗") else body  # a yes/no question is flipped without its 吗
        out = flip_polarity(core)
        if out is None or out == core:
            return None
        if _DOUBLE_NEGATION.search(out) and not _DOUBLE_NEGATION.search(core):
            return None  # 那还不错 -> 那还不不错, 挺不幸 -> 不不幸: a word that starts with 不 got another
        return out + body[len(core) :] + tail

    statements = [k for k, c in enumerate(clauses) if not re.search(r"[?？]|吗\s*$", c.strip())]
    persons = [k for k in statements if re.search(r"[我你他她]", clauses[k])]
    questions = [k for k in range(len(clauses)) if k not in statements]
    for k in dict.fromkeys([*persons, *statements, *questions]):
        new = flipped(k)
        if new is not None:
            old = clauses[k]
            neg = "-" if len(new) < len(old) or any(n in old for n in ("不", "没", "别")) else "+"
            detail = f"{neg}{next((n for n in ('没', '不', '别') if (n in new) != (n in old)), '不')}"
            return Trigger(inp.u1, inp.b1, "".join([*clauses[:k], new, *clauses[k + 1 :]]), "negation", detail, inp.id)
    return None


_DOUBLE_NEGATION = re.compile(r"[不没][不没]")
_NEG_PREFIXES = ("从来没有", "从来没", "从来不", "从没有", "从没", "从不", "没有", "没", "不", "别")
_DEGREE = frozenset({"很", "非常", "特别", "挺", "太", "真", "十分", "超", "好"})
_MODALS = frozenset({"会", "能", "想", "要", "可以", "愿意", "敢", "应该", "喜欢", "爱"})


def swap_word(
    text: str, rng: random.Random, table: dict[str, tuple[str, ...]], flags: str = "nvadi"
) -> tuple[str, str] | None:
    """``text`` with one content word (by default a noun, verb, adjective, adverb or idiom: the first letters
    of jieba's ``flags``) replaced by a randomly chosen entry of ``table`` (synonyms or antonyms), and the
    edit (``old->new``); None if no word is in it.

    >>> swap_word("我很喜欢猫。", random.Random(0), {"喜欢": ("讨厌",)})
    ('我很讨厌猫。', '喜欢->讨厌')
    """
    ws = words(text)
    noun_ok = "n" in flags  # a verbal noun (vn) counts as a noun
    cands = [
        i for i, (w, f) in enumerate(ws) if w in table and f[:1] in flags and (noun_ok or f != "vn") and w not in _STOP
    ]
    if not cands:
        return None
    i = rng.choice(cands)
    new = rng.choice(table[ws[i][0]])
    out = [w for w, _ in ws]
    out[i] = new
    return "".join(out), f"{ws[i][0]}->{new}"


def flip_polarity(text: str) -> str | None:
    """A statement with its first predicate's polarity flipped, by rules that keep it grammatical: a
    negation is taken out (从来没去过 -> 去过, 没有车 -> 有车, 不喝 -> 喝), else one is put in (是 -> 不是,
    有 -> 没有, 养了 -> 没养, 很好 -> 不好, 会开车 -> 不会开车, 住 -> 不住). None when ``text`` is a question
    or has no verb or adjective. Used to make contradicting replies for training (``--augment perturb``).

    >>> [flip_polarity(t) for t in ["我养了两只猫。", "我从来没去过黄山。", "空气很好。", "你去过吗？"]]
    ['我没养两只猫。', '我去过黄山。', '空气不好。', None]
    """
    if not text.strip() or re.search(r"[?？吗]\s*$", text.strip()):
        return None
    ws = words(text)
    out = [w for w, _ in ws]
    for i, (w, f) in enumerate(ws):
        if w.startswith(_NEG_PREFIXES) and (f[:1] in "vdz" or w in _NEG_PREFIXES or w == "不是"):
            neg = next(p for p in _NEG_PREFIXES if w.startswith(p))
            rest = w[len(neg) :]
            if neg.endswith("没有") and not rest:
                nxt = ws[i + 1] if i + 1 < len(ws) else ("", "")
                # 没有车 -> 有车; 没有去过 -> 去过 (jieba tags 养猫 a noun: a word that starts with a verb)
                verb = nxt[1].startswith("v") or (nxt[0][:1] and words(nxt[0][:1])[0][1].startswith("v"))
                rest = "" if verb else "有"
            out[i] = rest
            if i and ws[i - 1][0] in ("从来", "从", "一直"):  # 从来 没 去过 -> 去过
                out[i - 1] = ""
            return "".join(out)
    for i, (w, f) in enumerate(ws):
        if len(w) == 2 and w[0] in "我你他她" and w[1] in _MODALS:  # jieba joins 我会 into a noun
            out[i] = w[0] + "不" + w[1]
            return "".join(out)
        if f == "p" and w in ("在", "跟", "和", "给", "对") and any(g[:1] == "v" for _, g in ws[i + 1 :]):
            out[i] = "不" + w  # 我在银行上班 -> 我不在银行上班
            return "".join(out)
        if f[:1] not in "va" or (f in ("vn", "vg") and w not in _MODALS):
            continue
        after = ws[i + 1][0] if i + 1 < len(ws) else ""
        if w == "是":
            out[i] = "不是"
        elif after == "了" and not w.startswith("有"):
            out[i], out[i + 1] = "没" + w, ""
        elif w.startswith("有") or w.endswith("过") or after == "过":
            out[i] = "没" + w
        elif i and ws[i - 1][0] in _DEGREE:
            out[i - 1] = "不"
        else:
            out[i] = "不" + w
        return "".join(out)
    return None


def run_methods(
    inputs: Sequence[TriggerInput],
    methods: Sequence[str],
    seed: int,
    one: Callable[[str, TriggerInput, random.Random], Trigger | None],
    start: int = 0,
) -> TriggerSet:
    """``one(method, input, rng)`` for every input and method, with a generator seeded from ``seed``, the
    input's position and the method (shared by the Chinese and English builders). ``start`` is the position of
    ``inputs[0]`` among all the inputs (a batch after the first), so a batch gets what one run over them all does.

    A context gets each second turn once: a trigger whose u2 another method built for the same context is dropped,
    the paraphrase first (:func:`same_u2`; the default paraphraser replaces words by synonyms, so where u1 has one
    word to replace, its u2 is the synonym method's). What was skipped is counted by :func:`count_skips`."""
    out = TriggerSet()
    built: set[tuple[int, str]] = set()
    repeats: dict[tuple[int, str], str] = {}
    for n, inp in enumerate(inputs):
        if not _runs(inp):
            continue
        made = {m: one(m, inp, random.Random(f"{seed}:{start + n}:{m}")) for m in methods}
        for m, other in same_u2(made).items():
            made[m] = None
            repeats[(n, m)] = other
        for m, t in made.items():
            if t is not None:
                out.items.append(t)
                built.add((n, m))
    out.skipped = count_skips(
        inputs, methods, lambda n, _inp, m: (n, m) in built, lambda n, _inp, m: repeats.get((n, m))
    )
    return out


def same_u2(made: dict[str, Trigger | None]) -> dict[str, str]:
    """The methods of one context whose trigger repeats the u2 of another method's, each with that other method: a
    paraphrase gives way to any other method (a synonym's trigger names the word it replaced, the paraphrase's only
    the paraphraser), the rest to the method before them.

    >>> t = {m: Trigger("I like it.", "", u2, m) for m, u2 in [("paraphrase", "I love it."), ("synonym", "I love it.")]}
    >>> same_u2(t)
    {'paraphrase': 'synonym'}
    """
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for m in sorted(made, key=lambda m: m == "paraphrase"):  # a stable sort: the others keep their order
        t = made[m]
        if t is None:
            continue
        if t.u2 in first:
            out[m] = first[t.u2]
        else:
            first[t.u2] = m
    return out


def _runs(inp: TriggerInput) -> bool:
    """Whether any method runs on ``inp`` (one without a u1 is skipped whole, as ``empty u1``)."""
    return bool(inp.u1.strip())


def count_skips(
    inputs: Sequence[TriggerInput],
    methods: Sequence[str],
    built: Callable[[int, TriggerInput, str], bool],
    repeats: Callable[[int, TriggerInput, str], str | None] | None = None,
) -> Counter[str]:
    """The skips of a run of ``methods`` over ``inputs``, given which (position in ``inputs``, input, method)
    ``built`` a trigger and, of the others, which ``repeats`` the u2 of another method (named), keyed as
    :class:`TriggerSet` counts them: ``empty u1`` once for an input without a u1, ``METHOD: same u2 as OTHER`` for
    a trigger dropped as a repeat (:func:`same_u2`), ``METHOD: nothing to change`` for each other (input, method) that
    built none, in the order a run meets them. :func:`run_methods` counts its skips so, and a resumed ``probe
    triggers`` the skips of the triggers it keeps (of a record without its counts).

    >>> ins = [TriggerInput("Hi"), TriggerInput(" "), TriggerInput("Yo")]
    >>> count_skips(ins, ["negation", "synonym"], lambda n, inp, m: m == "negation" or n == 2)
    Counter({'synonym: nothing to change': 1, 'empty u1': 1})
    """
    skipped: Counter[str] = Counter()
    for n, inp in enumerate(inputs):
        if not _runs(inp):
            skipped["empty u1"] += 1
            continue
        for m in methods:
            if not built(n, inp, m):
                other = repeats(n, inp, m) if repeats is not None else None
                skipped[f"{m}: same u2 as {other}" if other else f"{m}: nothing to change"] += 1
    return skipped


def build_triggers(
    inputs: Sequence[TriggerInput],
    methods: Sequence[str] = METHODS,
    seed: int = 0,
    lexicon: ChineseLexicon | EnglishLexicon | None = None,
    paraphraser: Paraphraser | None = None,
    know: bool = True,
    short_pool: Sequence[str] | None = None,
    language: str = "zh",
) -> TriggerSet:
    """Every method on every input. Each (input, method) gets its own generator seeded from ``seed``, the
    input's position and the method, so adding inputs or methods does not change the others.

    ``language="zh"`` (default) takes a :class:`ChineseLexicon`; ``language="en"`` runs the English
    counterparts of :mod:`dialcheck.probes.triggers_en` with an English lexicon (default: WordNet). The work is
    done in batches (:func:`trigger_batches`, which gives them one by one)."""
    out = TriggerSet()
    for ts in trigger_batches(inputs, methods, seed, lexicon, paraphraser, know, short_pool, language):
        out.add(ts)
    return out


def trigger_batches(
    inputs: Sequence[TriggerInput],
    methods: Sequence[str] = METHODS,
    seed: int = 0,
    lexicon: ChineseLexicon | EnglishLexicon | None = None,
    paraphraser: Paraphraser | None = None,
    know: bool = True,
    short_pool: Sequence[str] | None = None,
    language: str = "zh",
    batch_size: int = BATCH_SIZE,
    start: int = 0,
) -> Iterator[TriggerSet]:
    """:func:`build_triggers` batch by batch: one :class:`TriggerSet` for each ``batch_size`` inputs, in order,
    from ``inputs[start]`` on (the inputs before it are left out: a resumed run has their triggers). Every
    (input, method) is seeded by its position among all the inputs, so the batches together are what
    :func:`build_triggers` builds, whatever ``batch_size`` and ``start``. Under ``language="en"`` the sentences
    of a batch are parsed by spaCy together (:func:`~dialcheck.probes.triggers_en.parse_all`, about three times
    faster than one by one); the Chinese methods call no model (jieba is a dictionary). Methods, language and
    lexicon are checked, and a default lexicon loaded, before the first batch is asked for; each batch is built when it
    is asked for, so a :func:`~dialcheck.probes.triggers_en.rules_version` block must hold the loop, not the call."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(f"unknown trigger method(s) {unknown}; known: {', '.join(METHODS)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if language == "en":
        from .triggers_en import EN_SHORT_UTTERANCES, english_trigger_batches

        if isinstance(lexicon, ChineseLexicon):
            raise InputError("language='en' needs an English lexicon (WordNetLexicon), got a ChineseLexicon")
        pool = EN_SHORT_UTTERANCES if short_pool is None else short_pool
        return english_trigger_batches(
            inputs, methods, seed, lexicon, paraphraser, know, pool, batch_size=batch_size, start=start
        )
    if language != "zh":
        raise InputError(f"unknown trigger language {language!r}; use zh or en")
    if lexicon is not None and not isinstance(lexicon, ChineseLexicon):
        raise InputError(f"language='zh' needs a ChineseLexicon, got {type(lexicon).__name__}")
    needs_lexicon = {"synonym", "antonym"} & set(methods) or ("paraphrase" in methods and paraphraser is None)
    if needs_lexicon and lexicon is None:
        lexicon = ChineseLexicon.load()
    if "paraphrase" in methods and paraphraser is None:
        assert lexicon is not None
        paraphraser = SynonymParaphraser(lexicon)
    pool = SHORT_UTTERANCES if short_pool is None else short_pool

    def one(m: str, inp: TriggerInput, rng: random.Random) -> Trigger | None:
        if m == "short_utterance":
            return short_utterance(inp, rng, pool)
        if m == "inquire_bot":
            return inquire_bot(inp, rng)
        if m == "inquire_user":
            return inquire_user(inp, rng, know)
        if m == "paraphrase":
            assert paraphraser is not None
            return paraphrase(inp, rng, paraphraser)
        if m == "negation":
            return negation(inp, rng, lexicon)
        assert lexicon is not None
        return perturb(inp, rng, lexicon, m)

    return (
        run_methods(inputs[lo : lo + batch_size], methods, seed, one, start=lo)
        for lo in range(start, len(inputs), batch_size)
    )
