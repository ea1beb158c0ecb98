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
        "returns_to_it": "comes back to it here",
        "returns_to_it_in": "comes back to it in “{what}”",
        "returns_to_it_too": "comes back to it in the same words",
        "more_connections": "and {n} more, less close",
        "interpretation": "What it meant at that moment",
        "details": "Details",
        "nothing_before": "Nothing was said before this message in its line.",
        "nothing_connects": "Nothing said earlier stands out as connected to it.",
        "no_clear_target": (
            "No earlier message is clearly what it responds to; it may connect to those below."
        ),
        "from_cues": "offline: from who replies to whom and word cues, not understanding",
        "from_model": "written by the language model",
        "offline:not-configured": (
            "Offline reading: no language model is configured, so AWAI shows what it found from"
            " who replies to whom and word cues, not understanding, and writes no interpretation."
        ),
        "offline:failed": (
            "The language model could not write this reading just now, so this offline reading"
            " comes from who replies to whom and word cues, not understanding."
        ),
        "offline:over-budget": (
            "This reading was too long for the language model, so this offline reading comes"
            " from who replies to whom and word cues, not understanding."
        ),
        "important": "especially important",
        "reason:meaning": "close in meaning",
        "reason:addressed": "the person it addresses",
        "reason:addressed-speaker": "addressed to its speaker",
        "reason:own": "the speaker's previous message",
        "reason:words": "shares this message's rare words",
        "reason:reply": "a possible reply target",
        "reason:answer": "the answer to an earlier question like this one",
        "reason:flow": "the message just before",
        "just_before": "just before",
        "messages_earlier": "{n} messages earlier",
        "moment_gap": ", ",
        "detail:close": "close in meaning ({similarity}; {threshold} needed)",
        "detail:closeness": "closeness in meaning {similarity} (recall by meaning needs {threshold})",
        "detail:fresh": "fresh in mind",
        "detail:held": "still in mind",
        "detail:fading": "fading from mind",
        "detail:said:one": "said once",
        "detail:said:other": "said {n} times, counting lines that say the same",
        "detail:schema": "closeness in meaning to this message {similarity}",
        "thoughts_count": "{n} related thoughts",
        "limits": (
            "AWAI reads only the words said in this channel, and only those said before this"
            " message: no tone, faces, outside experience or shared assumptions."
        ),
        "thread": "thread",
        "supports": "supports it",
        "opposes": "pushes against it",
        "unrelated": "unrelated",
        "undetermined": "stance not judged offline",
        "on_condition": ", on a condition: “{condition}”",
        "relation:answers": "Answers {who}: “{what}”",
        "relation:agrees": "Agrees with {who}: “{what}”",
        "relation:concedes": "Grants {who} a point, with a reservation: “{what}”",
        "relation:disagrees": "Disagrees with {who}: “{what}”",
        "relation:revises": "Revises {who}’s earlier claim: “{what}”",
        "relation:returns-to": "Returns to {who}: “{what}”",
        "relation:builds-on": "Builds on {who}: “{what}”",
        "relation:shifts-away": "Moves away from {who}: “{what}”",
        "relation:relates-to": "Connects to {who}: “{what}”",
        "relation:replies-to": "Replies to {who}: “{what}”",
        "relation:continues": "Continues what {who} said: “{what}”",
        "relation-short:answers": "answers",
        "relation-short:agrees": "agrees with",
        "relation-short:concedes": "grants, with a reservation,",
        "relation-short:disagrees": "disagrees with",
        "relation-short:revises": "revises",
        "relation-short:returns-to": "returns to",
        "relation-short:builds-on": "builds on",
        "relation-short:shifts-away": "moves away from",
        "relation-short:relates-to": "connects to",
        "relation-short:replies-to": "replies to",
        "relation-short:continues": "continues",
        "own_message": "{who}’s own earlier message",
        "shared_by": "Shared by {who}",
        "share": "Share in thread",
        "see_shared": "See the shared reading",
        "note:embedding-cut": (
            "Only the first {count} characters of {thoughts} were used to find related thoughts;"
            " the whole text is kept and shown."
        ),
        "note:thoughts-merged": (
            "This message says more than the {count} thoughts a message is read as: its last"
            " thought holds the rest."
        ),
        "note:context-trimmed": (
            "This reading's context was too large to send whole, so the language model was not"
            " shown {parts}."
        ),
        "note:text-shortened": (
            "The message's text was shortened for the language model (its thoughts were sent)."
        ),
        "note:model-failed": "Why: {failure}.",
        "note:model-malformed": "The language model's answer was malformed twice.",
        "note:links-dropped:one": (
            "1 connection the model wrote was left out: it pointed outside the context it was"
            " given."
        ),
        "note:links-dropped:other": (
            "{count} connections the model wrote were left out: they pointed outside the context"
            " it was given."
        ),
        "note:stances-unjudged": (
            "The language model did not judge the stance of {count} of the speaker's"
            " preconceptions."
        ),
        "note:fallback-thoughts": (
            "Some thoughts shown here were split offline while the language model did not answer;"
            " they are rewritten by the model when it answers again."
        ),
        "note:history-missing": (
            "AWAI has not read this channel's history from before it joined, so earlier messages"
            " may be missing from this context. `/awai backfill` reads it."
        ),
        "note:vectors-rebuilt:one": (
            "This channel's vector index was damaged (probably by a full disk); it was rebuilt"
            " from the stored messages: 1 thought."
        ),
        "note:vectors-rebuilt:other": (
            "This channel's vector index was damaged (probably by a full disk); it was rebuilt"
            " from the stored messages: {count} thoughts."
        ),
        "quoted": "“{what}”",
        "code": "(code)",
        "a_long_part": "a long part of the message",
        "list_and": " and ",
        "sentence_gap": " ",
        "list_comma": ", ",
        "part:recalled-thought:one": "1 recalled thought",
        "part:recalled-thought:other": "{n} recalled thoughts",
        "part:preconception:one": "1 preconception",
        "part:preconception:other": "{n} preconceptions",
        "part:preconception-example:one": "1 example of a preconception",
        "part:preconception-example:other": "{n} examples of preconceptions",
        "part:earlier-summary:one": "1 earlier summary",
        "part:earlier-summary:other": "{n} earlier summaries",
        "part:previous-thought:one": "1 thought of the message just before",
        "part:previous-thought:other": "{n} thoughts of the message just before",
        "part:own-thought:one": "1 of this message's own thoughts",
        "part:own-thought:other": "{n} of this message's own thoughts",
        "failure:unreachable": "the language model could not be reached",
        "failure:refused": (
            "the language model refused AWAI's request (the operator can see why in the log)"
        ),
        "failure:busy": "the language model is overloaded or rate-limited",
        "failure:unreadable": "the language model's answer could not be read",
        "failure:paused": (
            "the language model failed repeatedly, so AWAI is not calling it for a while"
        ),
        "read_by:offline": "Read offline: from who replies to whom and word cues, without a language model",
        "read_by:model": "Read by the language model {model}",
        "tokens": "{sent} tokens sent, {written} written",
        "digest:header": "Preconceptions digest",
        "digest:title": "Preconceptions digest · {channel}",
        "digest:first": "First digest of this channel.",
        "digest:since": "Changes since {since}.",
        "digest:the_last": "the last digest",
        "digest:no_longer": "no longer coming back (was {was})",
        "digest:fallback": "Preconceptions digest of this channel: {names}.",
        "digest:nobody": "nobody yet",
        "digest:picture": "Preconceptions: what each person keeps coming back to here",
        "digest:cut": "Cut to fit: the whole digest is attached as {file}.",
    },
    "ja": {
        "reading": "読み",
        "thoughts": "考え",
        "flow": "直前の流れ",
        "associations": "つながり",
        "schemas": "話者の思い込み",
        "returns_to_it": "ここでまたこの話に戻っている",
        "returns_to_it_in": "「{what}」でまたこの話に戻っている",
        "returns_to_it_too": "同じ発言でこの話にも戻っている",
        "more_connections": "ほか{n}件（関連はより弱い）",
        "interpretation": "その時点での意味",
        "details": "詳細",
        "nothing_before": "この流れでは、この発言より前の発言はありません。",
        "nothing_connects": "これより前の発言で、はっきりつながるものは見当たりません。",
        "no_clear_target": (
            "これより前の発言で、はっきりこの発言の応答先と言えるものはありません。"
            "下の発言とつながっているかもしれません。"
        ),
        "from_cues": "オフライン:誰が誰に返信しているかと言葉の手がかりによる判定で、理解ではありません",
        "from_model": "言語モデルによる読み",
        "offline:not-configured": (
            "言語モデルが設定されていないため、オフラインの読みです。誰が誰に返信しているかと"
            "言葉の手がかりによる判定で、理解ではなく、解釈も書きません。"
        ),
        "offline:failed": (
            "いま言語モデルが書けなかったため、オフラインの読みです。誰が誰に返信しているかと"
            "言葉の手がかりによる判定で、理解ではありません。"
        ),
        "offline:over-budget": (
            "言語モデルには長すぎたため、オフラインの読みです。誰が誰に返信しているかと"
            "言葉の手がかりによる判定で、理解ではありません。"
        ),
        "important": "特に重要",
        "reason:meaning": "意味が近い",
        "reason:addressed": "宛先の人の発言",
        "reason:addressed-speaker": "この話者に宛てた発言",
        "reason:own": "話者自身の直前の発言",
        "reason:words": "この発言の珍しい語を含む",
        "reason:reply": "返信先の候補",
        "reason:answer": "同じような以前の質問への答え",
        "reason:flow": "直前の発言",
        "just_before": "直前",
        "messages_earlier": "{n}件前",
        "moment_gap": "・",
        "detail:close": "意味が近い（{similarity}、必要なのは{threshold}）",
        "detail:closeness": "意味の近さ{similarity}（意味で思い出すには{threshold}が必要）",
        "detail:fresh": "記憶に新しい",
        "detail:held": "まだ記憶にある",
        "detail:fading": "記憶から薄れつつある",
        "detail:said:one": "一度だけ言われた",
        "detail:said:other": "同じ趣旨で{n}回言われた",
        "detail:schema": "この発言との意味の近さ{similarity}",
        "thoughts_count": "関連する考え{n}件",
        "limits": (
            "AWAIが読めるのは、このチャンネルでこの発言より前に話された言葉だけです。口調、表情、"
            "会話の外の経験や暗黙の前提は読めません。"
        ),
        "thread": "スレッド",
        "supports": "後押ししている",
        "opposes": "反している",
        "unrelated": "無関係",
        "undetermined": "オフラインのため未判定",
        "on_condition": "(条件付き:「{condition}」)",
        "relation:answers": "{who}の「{what}」に答えている",
        "relation:agrees": "{who}の「{what}」に同意している",
        "relation:concedes": "{who}の「{what}」を一部認めつつ留保している",
        "relation:disagrees": "{who}の「{what}」に反対している",
        "relation:revises": "{who}の以前の発言「{what}」を訂正している",
        "relation:returns-to": "{who}の「{what}」に立ち戻っている",
        "relation:builds-on": "{who}の「{what}」を発展させている",
        "relation:shifts-away": "{who}の「{what}」から話題を変えている",
        "relation:relates-to": "{who}の「{what}」とつながっている",
        "relation:replies-to": "{who}の「{what}」に返信している",
        "relation:continues": "{who}自身の「{what}」の続きを話している",
        "relation-short:answers": "回答",
        "relation-short:agrees": "同意",
        "relation-short:concedes": "一部容認",
        "relation-short:disagrees": "反対",
        "relation-short:revises": "訂正",
        "relation-short:returns-to": "立ち戻り",
        "relation-short:builds-on": "発展",
        "relation-short:shifts-away": "話題の転換",
        "relation-short:relates-to": "関連",
        "relation-short:replies-to": "返信",
        "relation-short:continues": "続き",
        "own_message": "{who}自身の前の発言",
        "shared_by": "{who}さんが共有",
        "share": "スレッドで共有",
        "see_shared": "共有された読みを見る",
        "note:embedding-cut": (
            "{thoughts}は、関連する考えを探すのに最初の{count}文字だけを使いました"
            "(全文は保存され、表示されています)。"
        ),
        "note:thoughts-merged": (
            "この発言は、1件の発言として読める{count}個の考えを超えています。最後の考えに残りを"
            "まとめています。"
        ),
        "note:context-trimmed": (
            "文脈が大きすぎて全体を送れなかったため、言語モデルには{parts}を見せていません。"
        ),
        "note:text-shortened": "言語モデルには発言の本文を短くして送りました(考えは送っています)。",
        "note:model-failed": "理由:{failure}。",
        "note:model-malformed": "言語モデルの回答が2回続けて不正な形式でした。",
        "note:links-dropped": (
            "モデルが書いたつながりのうち{count}件は、渡した文脈の外を指していたため省きました。"
        ),
        "note:stances-unjudged": (
            "言語モデルは、話者の思い込みのうち{count}件について立場を判定しませんでした。"
        ),
        "note:fallback-thoughts": (
            "ここに示す考えの一部は、言語モデルが応答しなかった間にオフラインで分けたものです。"
            "モデルが再び応答すると書き直されます。"
        ),
        "note:history-missing": (
            "AWAIは参加前のこのチャンネルの履歴をまだ読んでいないため、以前の発言がこの文脈から"
            "欠けているかもしれません。`/awai backfill` で読み込めます。"
        ),
        "note:vectors-rebuilt": (
            "このチャンネルのベクトル索引が壊れていたため（ディスクの空き不足と思われます）、"
            "保存済みのメッセージから作り直しました：考え{count}件。"
        ),
        "quoted": "「{what}」",
        "code": "(コード)",
        "a_long_part": "メッセージの長い部分",
        "list_and": "、",
        "sentence_gap": "",
        "list_comma": "、",
        "part:recalled-thought": "思い出した考え{n}件",
        "part:preconception": "思い込み{n}件",
        "part:preconception-example": "思い込みの例{n}件",
        "part:earlier-summary": "以前の要約{n}件",
        "part:previous-thought": "直前の発言の考え{n}件",
        "part:own-thought": "この発言自身の考え{n}件",
        "failure:unreachable": "言語モデルに接続できませんでした",
        "failure:refused": "言語モデルがAWAIの要求を断りました(理由は運用担当者がログで確認できます)",
        "failure:busy": "言語モデルが混雑しているか、利用制限に達しています",
        "failure:unreadable": "言語モデルの回答を読み取れませんでした",
        "failure:paused": "言語モデルの失敗が続いたため、AWAIはしばらく呼び出しを止めています",
        "read_by:offline": "オフラインの読み:言語モデルを使わず、誰が誰に返信しているかと言葉の手がかりから",
        "read_by:model": "言語モデル {model} による読み",
        "tokens": "送信{sent}トークン・生成{written}トークン",
        "digest:header": "思い込みダイジェスト",
        "digest:title": "思い込みダイジェスト · {channel}",
        "digest:first": "このチャンネルで初めてのダイジェストです。",
        "digest:since": "{since}からの変化です。",
        "digest:the_last": "前回のダイジェスト",
        "digest:no_longer": "出てこなくなりました（以前は{was}）",
        "digest:fallback": "このチャンネルの思い込みダイジェスト：{names}。",
        "digest:nobody": "まだ誰もいません",
        "digest:picture": "思い込み：各人がここで繰り返し口にすること",
        "digest:cut": "表示しきれないため、ダイジェスト全体を {file} として添付しています。",
    },
}


def labels_for(language: str) -> dict[str, str]:
    """The words of ``language`` (a BCP 47 tag or its first part), English when AWAI has none."""
    return LABELS.get(language.split("-")[0].lower(), LABELS["en"])


def counted(words: dict[str, str], key: str, n: int) -> str:
    """The phrase ``key`` for ``n`` things: ``key:one`` or ``key:other`` where the language
    has plural forms (English), else ``key`` itself (Japanese has none)."""
    form = f"{key}:{'one' if n == 1 else 'other'}"
    return words.get(form) or words[key]
