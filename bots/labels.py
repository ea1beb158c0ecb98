"""Words every surface shows, in the reader's language.

Why shared: the terminal, Slack and Discord show the same reading (see :mod:`bots.layout`); a
Japanese reader gets Japanese words everywhere, the offline reading and its relations included.
A phrase with ``{who}`` and ``{what}`` places the earlier message's speaker and words as the
language orders them.
"""

from __future__ import annotations

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "reading": "Reading",
        "thoughts": "Thoughts",
        "flow": "Just before",
        "associations": "Connections",
        "schemas": "The speaker's preconceptions",
        "returns_to_it": "comes back to it (thought {})",
        "interpretation": "What it meant at that moment",
        "details": "Details",
        "nothing_before": "Nothing was said before this message in its line.",
        "nothing_connects": "Nothing said earlier stands out as connected to it.",
        "from_cues": "offline: from word cues, not understanding",
        "from_model": "written by the language model",
        "offline:not-configured": (
            "Offline reading: no language model is configured, so AWAI shows what it found"
            " and writes no interpretation."
        ),
        "offline:failed": (
            "The language model could not write this reading just now, so this is the offline"
            " reading."
        ),
        "offline:over-budget": (
            "This reading was too long for the language model, so this is the offline reading."
        ),
        "important": "especially important",
        "reason:meaning": "close in meaning",
        "reason:addressed": "the person it addresses",
        "reason:addressed-speaker": "addressed to its speaker",
        "reason:own": "the speaker's previous message",
        "reason:words": "shares this message's rare words",
        "reason:flow": "the message just before",
        "just_before": "just before",
        "messages_earlier": "{n} messages earlier, ",
        "similarity": "similarity",
        "threshold": "needed",
        "activation": "activation",
        "occurrences": "said",
        "thoughts_count": "{n} related thoughts",
        "limits": (
            "AWAI reads only the words said in this channel, and only those said before this"
            " message: no tone, faces, outside experience or shared assumptions."
        ),
        "thread": "thread",
        "top-level": "channel",
        "supports": "supports it",
        "opposes": "pushes against it",
        "unrelated": "unrelated",
        "undetermined": "stance not judged offline",
        "on_condition": ", on a condition: {condition}",
        "relation:answers": "Answers {who}: “{what}”",
        "relation:agrees": "Agrees with {who}: “{what}”",
        "relation:concedes": "Grants {who} a point, with a reservation: “{what}”",
        "relation:disagrees": "Disagrees with {who}: “{what}”",
        "relation:revises": "Revises {who}’s earlier claim: “{what}”",
        "relation:returns-to": "Returns to {who}: “{what}”",
        "relation:builds-on": "Builds on {who}: “{what}”",
        "relation:shifts-away": "Moves away from {who}: “{what}”",
        "relation:relates-to": "Connects to {who}: “{what}”",
        "relation-short:answers": "answers",
        "relation-short:agrees": "agrees with",
        "relation-short:concedes": "grants, with a reservation,",
        "relation-short:disagrees": "disagrees with",
        "relation-short:revises": "revises",
        "relation-short:returns-to": "returns to",
        "relation-short:builds-on": "builds on",
        "relation-short:shifts-away": "moves away from",
        "relation-short:relates-to": "connects to",
        "shared_by": "Shared by {who}",
        "share": "Share in thread",
        "backend": "backend",
        "tokens": "tokens",
    },
    "ja": {
        "reading": "読み",
        "thoughts": "考え",
        "flow": "直前の流れ",
        "associations": "つながり",
        "schemas": "話者の思い込み",
        "returns_to_it": "ここでまたこの話に戻っている(思考 {})",
        "interpretation": "その時点での意味",
        "details": "詳細",
        "nothing_before": "この流れでは、この発言より前の発言はありません。",
        "nothing_connects": "これより前の発言で、はっきりつながるものは見当たりません。",
        "from_cues": "オフライン:言葉の手がかりによる判定で、理解ではありません",
        "from_model": "言語モデルによる読み",
        "offline:not-configured": (
            "オフラインの読みです。言語モデルが設定されていないため、AWAIが見つけたことだけを"
            "示し、解釈は書きません。"
        ),
        "offline:failed": (
            "いま言語モデルがこの読みを書けなかったため、オフラインの読みを示しています。"
        ),
        "offline:over-budget": "言語モデルには長すぎたため、オフラインの読みを示しています。",
        "important": "特に重要",
        "reason:meaning": "意味が近い",
        "reason:addressed": "宛先の人の発言",
        "reason:addressed-speaker": "この話者に宛てた発言",
        "reason:own": "話者自身の直前の発言",
        "reason:words": "この発言の珍しい語を含む",
        "reason:flow": "直前の発言",
        "just_before": "直前",
        "messages_earlier": "{n}件前・",
        "similarity": "類似度",
        "threshold": "必要値",
        "activation": "活性",
        "occurrences": "回数",
        "thoughts_count": "関連する考え{n}件",
        "limits": (
            "AWAIが読めるのは、このチャンネルでこの発言より前に話された言葉だけです。口調、表情、"
            "会話の外の経験や暗黙の前提は読めません。"
        ),
        "thread": "スレッド",
        "top-level": "チャンネル",
        "supports": "後押ししている",
        "opposes": "反している",
        "unrelated": "無関係",
        "undetermined": "オフラインのため未判定",
        "on_condition": "(条件付き:{condition})",
        "relation:answers": "{who}の「{what}」に答えている",
        "relation:agrees": "{who}の「{what}」に同意している",
        "relation:concedes": "{who}の「{what}」を一部認めつつ留保している",
        "relation:disagrees": "{who}の「{what}」に反対している",
        "relation:revises": "{who}の以前の発言「{what}」を訂正している",
        "relation:returns-to": "{who}の「{what}」に立ち戻っている",
        "relation:builds-on": "{who}の「{what}」を発展させている",
        "relation:shifts-away": "{who}の「{what}」から話題を変えている",
        "relation:relates-to": "{who}の「{what}」とつながっている",
        "relation-short:answers": "回答",
        "relation-short:agrees": "同意",
        "relation-short:concedes": "一部容認",
        "relation-short:disagrees": "反対",
        "relation-short:revises": "訂正",
        "relation-short:returns-to": "立ち戻り",
        "relation-short:builds-on": "発展",
        "relation-short:shifts-away": "話題の転換",
        "relation-short:relates-to": "関連",
        "shared_by": "{who}さんが共有",
        "share": "スレッドで共有",
        "backend": "バックエンド",
        "tokens": "トークン",
    },
}


def labels_for(language: str) -> dict[str, str]:
    """The words of ``language`` (a BCP 47 tag or its first part), English when AWAI has none."""
    return LABELS.get(language.split("-")[0].lower(), LABELS["en"])
