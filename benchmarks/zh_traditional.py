"""Does the Chinese default give a conversation in Traditional characters the verdict it gives in Simplified? CDConv,
which it was trained on, is Simplified. Each conversation of the hand-written sets is converted character by
character with the explicit Simplified-to-Traditional map below (Taiwan usage) and checked in both scripts by the
model ``dialcheck.load(language="zh")`` loads: verdict and category agreement, and the largest score change.

    python benchmarks/zh_traditional.py                       # cdconv_hand.jsonl and cdconv_hand_d.jsonl
    python benchmarks/zh_traditional.py FILE.jsonl --show 5   # other conversations; the 5 largest changes

The map holds the characters of the default files that differ between the scripts (written once with OpenCC's
``s2tw`` and read over by hand, so the script needs no converter) and :data:`PHRASES` the words where a character
is written otherwise (a surname, 公里, 旅游). A character of another file that neither the map nor :data:`SAME`
knows is kept as it is and named: the conversion of such a file is only as complete as the map.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _rows import parsed_rows

from dialcheck.cli.common import nonnegative_int
from dialcheck.errors import InputError

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_FILES = (DATA / "cdconv_hand.jsonl", DATA / "cdconv_hand_d.jsonl")

_PAIRS = (
    "东東两兩个個丰豐为為么麼乐樂书書从從们們会會伦倫儿兒养養几幾刚剛别別办辦动動医醫单單卫衛厅廳历歷厉厲厌厭厨廚只隻后後"
    "吗嗎听聽员員周週园園场場坚堅壮壯妈媽学學宠寵宫宮对對尔爾属屬岁歲师師广廣开開弹彈当當恋戀惯慣护護报報挤擠数數无無"
    "时時显顯来來样樣楼樓欢歡气氣没沒点點烟菸烧燒热熱爱愛独獨猫貓电電着著离離稳穩篮籃粤粵红紅级級纪紀练練经經结結给給"
    "绿綠苹蘋观觀视視认認讨討记記讲講识識语語说說读讀谁誰谈談赶趕车車软軟轻輕辆輛边邊过過运運还還这這里裡钢鋼铁鐵银銀"
    "锅鍋错錯镜鏡闹鬧饭飯驾駕黄黃杰傑"
)
#: Simplified character -> its Traditional form, for the characters of the default files that differ.
S2T: dict[str, str] = dict(zip(_PAIRS[::2], _PAIRS[1::2], strict=True))
#: The characters of the default files written alike in both scripts.
SAME = (
    "一三上下不中串久九也了二五些京人什今他以件休但位住作你便候做偶兄八公六其冬冷出到力加北十半南印厚去叫可史司吃吉同名吧"
    "呀呢和咖咪哇哥哪唱啊啡啤喜喝嗯器四回在地坐城士夏多夜大天太女她好妹姐婆婚子字孤孩它宅定害家小少尤就山川工差己已市常"
    "平年幻幼床序底座弟影很得心忙怎怕恭息惜想成我或戴所手才打抽拿持挺故敏教敢方旅日早明昨是晚更最月有服朝末本杯果梯棒楚"
    "次正步死每毛水泳流浪海深清游演火炒照熟熬爬爸片物特狗猜玩班球琴瓶生用田番疼白的直看真眼睡知秋科程空穿算累置老考者聚"
    "肉能自舒般色茄茶菜蛋行要象走起越跑身辣近速道那都酒阪陪雨雪餐香高麻黑"
)
#: Words whose characters are written otherwise than :data:`S2T` writes them alone (converted first).
PHRASES = {"周杰伦": "周杰倫", "公里": "公里", "旅游": "旅遊"}


def to_traditional(text: str) -> str:
    """``text`` in Traditional characters: :data:`PHRASES` first, then character by character.

    >>> to_traditional("我养了两只猫。周末去看周杰伦，走了三公里。")
    '我養了兩隻貓。週末去看周杰倫，走了三公里。'
    """
    out, i = [], 0
    while i < len(text):
        word = next((w for w in PHRASES if text.startswith(w, i)), None)
        if word is not None:
            out.append(PHRASES[word])
            i += len(word)
        else:
            out.append(S2T.get(text[i], text[i]))
            i += 1
    return "".join(out)


def read_conversations(path: Path) -> list[tuple[str, list[str], bool | None]]:
    """(id, turns, label) of each line of a JSONL file of ``{"id": ..., "turns": ["...", ...]}`` (bare string
    turns); the label is its ``"contradiction"``, None where there is none."""

    def parse(row: dict) -> tuple[str, list[str], bool | None]:
        turns, label = row["turns"], row.get("contradiction")
        if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
            raise TypeError("turns: expected a list of strings")
        if label is not None and not isinstance(label, bool):
            raise TypeError("contradiction: expected true or false")
        return str(row.get("id", "")), turns, label

    return parsed_rows(path, parse, 'a conversation {"turns": ["...", ...]}')


def compare(simplified: list, traditional: list) -> dict:
    """Agreement of two lists of verdicts (same conversations, in order) and the score changes."""
    changes = [abs(t.score - s.score) for s, t in zip(simplified, traditional, strict=True)]
    return {
        "n": len(changes),
        "same_verdict": sum(s.contradiction == t.contradiction for s, t in zip(simplified, traditional, strict=True)),
        "same_category": sum(_label(s) == _label(t) for s, t in zip(simplified, traditional, strict=True)),
        "max_change": max(changes),
        "mean_change": sum(changes) / len(changes),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=list(DEFAULT_FILES), help="JSONL conversations")
    ap.add_argument("--show", type=nonnegative_int, default=5, help="conversations with the largest changes shown")
    args = ap.parse_args()
    read = [(f"{p.name}:{i}", turns, label) for p in args.files for i, turns, label in read_conversations(p)]
    rows = [(i, turns) for i, turns, _ in read]
    known = S2T.keys() | set(SAME)
    unknown = {c for _, turns in rows for t in turns for c in t if "\u4e00" <= c <= "\u9fff" and c not in known}
    trad = [[to_traditional(t) for t in turns] for _, turns in rows]
    if not rows:
        raise InputError("no conversations")

    import dialcheck
    from dialcheck.api import route
    from dialcheck.io import parse_dialogue

    det = dialcheck.load(language="zh")
    routed = sum(route(parse_dialogue(turns)) == "zh" for turns in trad)
    simp_v = det.predict([turns for _, turns in rows])
    trad_v = det.predict(trad)
    c = compare(simp_v, trad_v)
    print(f"model: {det.path.name}; {c['n']} conversations from {', '.join(p.name for p in args.files)}")
    print(f"Traditional routed to the Chinese default: {routed} of {c['n']}")
    print(f"characters the map does not know (kept as they are): {len(unknown)} {''.join(sorted(unknown))}".rstrip())
    print(f"same verdict: {c['same_verdict']} of {c['n']}; same verdict and category: {c['same_category']} of {c['n']}")
    labelled = [(k, r[2]) for k, r in enumerate(read) if r[2] is not None]
    if labelled:
        right = [sum(vs[k].contradiction == y for k, y in labelled) for vs in (simp_v, trad_v)]
        print(
            f"verdict as labelled (contradiction or not): Simplified {right[0]} of {len(labelled)}, "
            f"Traditional {right[1]} of {len(labelled)}"
        )
    print(f"score change |Traditional - Simplified|: max {c['max_change']:.3f}, mean {c['mean_change']:.3f}")
    differ = [k for k in range(len(rows)) if _label(simp_v[k]) != _label(trad_v[k])]
    largest = sorted(range(len(rows)), key=lambda k: -abs(trad_v[k].score - simp_v[k].score))[: args.show]
    for title, ks in (("verdict or category differs", differ), ("largest score changes", largest)):
        print(f"{title}:" if ks else f"{title}: none")
        for k in ks:
            s, t = simp_v[k], trad_v[k]
            print(f"  {rows[k][0]}: {_label(s)} {s.score:.2f} -> {_label(t)} {t.score:.2f}  {' / '.join(rows[k][1])}")


def _label(v) -> str:
    return (v.category or "contradiction") if v.contradiction else "none"


if __name__ == "__main__":
    from _cli import run

    run(main)
