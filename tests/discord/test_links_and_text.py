"""Message links users paste, and Discord markup turned into the plain text AWAI reads."""

from __future__ import annotations

import pytest

from awai_engine.values import MessageRef
from bots.discord.keys import channel_key, parse_channel_key
from bots.discord.links import MalformedLinkError, MessageLink, jump_url_of, parse_message_link
from bots.discord.plaintext import MentionNames, plain_text

G, C, M, T = 111111111111111111, 222222222222222222, 333333333333333333, 444444444444444444


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"https://discord.com/channels/{G}/{C}/{M}", MessageLink(M, C, G)),
        (f"<https://ptb.discord.com/channels/{G}/{C}/{M}>", MessageLink(M, C, G)),
        (f"https://canary.discordapp.com/channels/{G}/{C}/{M}/", MessageLink(M, C, G)),
        (f"  {C}-{M} ", MessageLink(M, C)),
        (str(M), MessageLink(M)),
        (f"https://discord.com/channels/@me/{C}/{M}", MessageLink(M, C, None, direct_message=True)),
    ],
)
def test_message_links_in_every_form_discord_copies_are_understood(text, expected):
    assert parse_message_link(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "https://example.com/channels/1/2/3",
        f"https://discord.com/channels/{G}/{C}",
        "123",
    ],
)
def test_anything_else_is_refused_with_a_hint(text):
    with pytest.raises(MalformedLinkError, match="Copy Message Link"):
        parse_message_link(text)


def test_jump_links_point_into_the_thread_a_message_was_posted_in():
    key = channel_key(G, C)
    top = MessageRef(message_id=str(M), speaker_id="1", speaker_name="A", ts=1.0, position=0)
    reply = top.model_copy(update={"message_id": "5", "thread_root": str(T), "position": 1})
    assert jump_url_of(key, top) == f"https://discord.com/channels/{G}/{C}/{M}"
    assert jump_url_of(key, reply) == f"https://discord.com/channels/{G}/{T}/5"
    assert parse_channel_key(key) == (G, C)
    assert parse_channel_key("slack:T1:C1") is None


NAMES = MentionNames(
    users={1: "Ann Lee", 2: "bob_the_builder"}, roles={3: "mods"}, channels={4: "general"}
)


@pytest.mark.parametrize(
    ("markup", "plain"),
    [
        ("<@1> and <@!2>: look", "@Ann Lee and @bob_the_builder: look"),
        ("ask <@&3> in <#4>", "ask @mods in #general"),
        ("who is <@9>?", "who is @Unknown User?"),
        (
            "**bold** *it* __under__ ~~gone~~ ||secret|| ***both***",
            "bold it under gone secret both",
        ),
        ("keep snake_case_names and 2 * 3 * 4", "keep snake_case_names and 2 * 3 * 4"),
        ("_quietly_ said", "quietly said"),
        ("# Title\n> quoted\n-# small print", "Title\nquoted\nsmall print"),
        ("see [the docs](https://x.dev/a_b_c) now", "see the docs (https://x.dev/a_b_c) now"),
        ("raw https://x.dev/**not_bold**/page", "raw https://x.dev/**not_bold**/page"),
        ("`**kept**` stays", "**kept** stays"),
        ("```py\nx = a_b * c_d\n```", "```py\nx = a_b * c_d\n```"),
        ("not \\*emphasis\\*", "not *emphasis*"),
        ("run </awai read:123456789012345678> <:wave:123456789012345678>", "run /awai read :wave:"),
        ("at <t:0:R>", "at 1970-01-01 00:00 UTC"),
        ("<https://no.embed/x>", "https://no.embed/x"),
    ],
)
def test_discord_markup_becomes_plain_text(markup, plain):
    assert plain_text(markup, NAMES) == plain
