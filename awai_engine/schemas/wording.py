"""The digest's words, in the channel's language (English or Japanese).

Why its own table: the digest's picture and Markdown are made in the engine, which imports
nothing from ``bots/`` (where the readings' words live, ``bots/labels.py``); the two tables use
the same terms ("preconception" / 思い込み). The language is the channel's own, from what the
digest's speakers said (:func:`channel_language`): a digest is posted for everyone in the
channel, not for one reader.
"""

from __future__ import annotations

from collections.abc import Iterable

from awai_engine.text import detect_language

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Preconceptions in {channel}",
        "sentence_gap": " ",
        "subtitle": "Bar: messages it came back in.",
        "first": "First digest: trends start next time.",
        "since": "Trends since the last digest.",
        "speaker_counts": "{messages} · {preconceptions}",
        "message:one": "{n} message",
        "message:other": "{n} messages",
        "thought:one": "{n} thought",
        "thought:other": "{n} thoughts",
        "preconception:one": "{n} preconception",
        "preconception:other": "{n} preconceptions",
        "more:one": "and {n} smaller one",
        "more:other": "and {n} smaller ones",
        "more_people:one": "{n} more person with preconceptions: see the message.",
        "more_people:other": "{n} more people with preconceptions: see the message.",
        "trend:new": "new",
        "trend:same": "same",
        "trend:changed": "changed",
        "trend:delta": "{delta}",
        "none_yet": "No preconception has formed here yet.",
        "footer": (
            "What each person keeps coming back to in this channel, from their words here only."
        ),
        # Markdown
        "stamp_first": "{when}. First digest of this channel.",
        "stamp_since": "{when}. Changes since the previous digest of {previous}.",
        "nobody": "Nobody has said anything here yet.",
        "speaker_head": "{name}: {messages}, {preconceptions}",
        "no_preconception": "No preconception yet: nothing they said keeps coming back.",
        "came_back": "came back in {messages} ({thoughts})",
        "unclustered": "Not in any preconception: {messages} of theirs.",
        "dissolved": "No longer coming back since the previous digest:",
        "a_preconception": "a preconception",
        "others": "{n} less active speakers are not shown.",
        "change:new": "new",
        "change:grown": "grown",
        "change:shrunk": "shrunk",
        "was": "{change} (was {was})",
        "change:members changed": "reshaped",
        "change:summary rewritten": "renamed",
        "disclaimer": (
            "Preconceptions are groups of what each person said in this channel, and only here:"
            " they are not a judgement of anyone beyond these words."
        ),
    },
    "ja": {
        "title": "{channel} の思い込み",
        "sentence_gap": "",
        "subtitle": "棒の長さ：繰り返し出てきたメッセージの数。",
        "first": "初回のダイジェスト：変化は次回から表示します。",
        "since": "前回のダイジェストからの変化。",
        "speaker_counts": "{messages}・{preconceptions}",
        "message": "メッセージ{n}件",
        "thought": "考え{n}件",
        "preconception": "思い込み{n}件",
        "more": "ほか小さいもの{n}件",
        "more_people": "ほか{n}人の思い込みはメッセージ本文にあります。",
        "trend:new": "新規",
        "trend:same": "変化なし",
        "trend:changed": "変化あり",
        "trend:delta": "{delta}件",
        "none_yet": "このチャンネルではまだ思い込みは見つかっていません。",
        "footer": "各人がこのチャンネルで繰り返し口にすること。ここでの発言だけから作っています。",
        "stamp_first": "{when}。このチャンネルで初めてのダイジェストです。",
        "stamp_since": "{when}。前回（{previous}）のダイジェストからの変化です。",
        "nobody": "このチャンネルではまだ誰も発言していません。",
        "speaker_head": "{name}：{messages}、{preconceptions}",
        "no_preconception": "まだ思い込みはありません。繰り返し出てくる話はまだないようです。",
        "came_back": "{messages}で繰り返し（{thoughts}）",
        "unclustered": "どの思い込みにも入らないもの：{messages}。",
        "dissolved": "前回のダイジェスト以降、出てこなくなったもの：",
        "a_preconception": "思い込み",
        "others": "発言の少ない{n}人は表示していません。",
        "change:new": "新規",
        "change:grown": "拡大",
        "change:shrunk": "縮小",
        "was": "{change}（以前は{was}）",
        "change:members changed": "構成が変化",
        "change:summary rewritten": "名前が変化",
        "disclaimer": (
            "思い込みは、各人がこのチャンネルで言ったことだけをまとめたものです。"
            "その人についての評価ではありません。"
        ),
    },
}


def words_for(language: str) -> dict[str, str]:
    """The digest's words in ``language`` (its first part), English when there are none."""
    return WORDS.get(language.split("-")[0].lower(), WORDS["en"])


def counted(words: dict[str, str], key: str, n: int) -> str:
    """``key`` for ``n`` things: ``key:one`` / ``key:other`` where the language has plurals."""
    form = words.get(f"{key}:{'one' if n == 1 else 'other'}") or words[key]
    return form.format(n=n)


def channel_language(texts: Iterable[str]) -> str:
    """``ja`` or ``en``: the language most of these texts (what the speakers said) are in."""
    return detect_language(" ".join(texts))
