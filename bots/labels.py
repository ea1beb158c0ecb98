"""Words every renderer shows, in the language of the message being read.

Why shared: the terminal, Slack and Discord show the same parts of a reading; a Japanese message
gets Japanese headings everywhere, including in an offline reading.
"""

from __future__ import annotations

from awai_engine.values import Association

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "reading": "Reading",
        "thoughts": "Thoughts",
        "flow": "Flow (what the room had just said)",
        "previous": "Just before",
        "earlier": "Earlier",
        "associations": "Recalled earlier thoughts",
        "schemas": "The speaker's preconceptions",
        "interpretation": "What it meant at that moment",
        "links": "Connections",
        "bearings": "How the preconceptions bear on it",
        "offline": (
            "Offline reading: no language model is configured, so this shows the context AWAI"
            " assembled and writes no interpretation."
        ),
        "nothing_before": "Nothing was said before this message in its line.",
        "no_associations": "No earlier thought was close enough in meaning.",
        "important": "especially important",
        "reason:addressed": "addressed to its speaker",
        "reason:addressed-speaker": "its speaker addressed this one",
        "reason:own": "the speaker's previous message",
        "distance": "back",
        "similarity": "similarity",
        "threshold": "needed",
        "activation": "activation",
        "limits": (
            "AWAI reads only the words said in this channel, and only those said before this"
            " message: no tone, faces, outside experience or shared assumptions."
        ),
        "thread": "thread",
        "top-level": "channel",
        "supports": "supports",
        "opposes": "opposes",
        "unrelated": "unrelated",
        "undetermined": "stance not judged offline",
        "answers": "answers",
        "agrees": "agrees with",
        "disagrees": "disagrees with",
        "returns-to": "returns to",
        "shifts-away": "shifts away from",
        "builds-on": "builds on",
    },
    "ja": {
        "reading": "読み",
        "thoughts": "考え",
        "flow": "流れ(その場で直前まで話されていたこと)",
        "previous": "直前の発言",
        "earlier": "それより前",
        "associations": "連想された過去の考え",
        "schemas": "話者の思い込み(スキーマ)",
        "interpretation": "その時点での意味",
        "links": "つながり",
        "bearings": "思い込みとの関係",
        "offline": (
            "オフラインの読みです。言語モデルが設定されていないため、AWAIが組み立てた文脈のみを"
            "示し、解釈は書きません。"
        ),
        "nothing_before": "この流れでは、この発言より前の発言はありません。",
        "no_associations": "意味の十分に近い過去の考えはありませんでした。",
        "important": "特に重要",
        "reason:addressed": "宛先の人の発言",
        "reason:addressed-speaker": "この話者に宛てた発言",
        "reason:own": "話者自身の直前の発言",
        "distance": "件前",
        "similarity": "類似度",
        "threshold": "必要値",
        "activation": "活性",
        "limits": (
            "AWAIが読めるのは、このチャンネルでこの発言より前に話された言葉だけです。口調、表情、"
            "会話の外の経験や暗黙の前提は読めません。"
        ),
        "thread": "スレッド",
        "top-level": "チャンネル",
        "supports": "支持",
        "opposes": "反対",
        "unrelated": "無関係",
        "undetermined": "オフラインのため未判定",
        "answers": "回答",
        "agrees": "同意",
        "disagrees": "反対",
        "returns-to": "立ち戻り",
        "shifts-away": "話題の転換",
        "builds-on": "発展",
    },
}


def labels_for(language: str) -> dict[str, str]:
    return LABELS.get(language, LABELS["en"])


def recall_reason(item: Association, words: dict[str, str]) -> str | None:
    """Why a thought was recalled when it was not by meaning (addressing, the speaker's own)."""
    if item.reason == "meaning":
        return None
    return words.get(f"reason:{item.reason}", item.reason)
