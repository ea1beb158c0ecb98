"""Slack markup → plain text, and message permalinks read and written."""

from __future__ import annotations

import pytest

from bots.slack.links import MalformedLinkError, parse_permalink, permalink
from bots.slack.markup import to_plain_text

NAMES = {"U1": "Ann", "U2": "Ben Ito"}


def _plain(text: str) -> tuple[str, tuple[str, ...]]:
    return to_plain_text(text, lambda user_id: NAMES.get(user_id, user_id))


@pytest.mark.parametrize(
    ("slack_text", "plain"),
    [
        ("<@U1> and <@U2|ben> agree", "@Ann and @Ben Ito agree"),
        ("<@U9|old.name> left", "@old.name left"),
        ("*bold* _italic_ ~struck~ words", "bold italic struck words"),
        ("snake_case_names and 2*3*4 stay", "snake_case_names and 2*3*4 stay"),
        ("`*not bold*` and ```\nx = <1>\n```", "`*not bold*` and ```\nx = <1>\n```"),
        (
            "<https://a.io/x_y|the doc> <https://b.io> <mailto:c@d.io|c@d.io>",
            "the doc (https://a.io/x_y) https://b.io c@d.io",
        ),
        (
            "<!here> <!channel> <!subteam^S1|@design> <!date^1700000000^{date}|Nov 14>",
            "@here @channel @design Nov 14",
        ),
        ("<#C1|general> &lt;3 &amp; &gt; done", "#general <3 & > done"),
        ("&gt; quoted line\nanswer", "quoted line\nanswer"),
    ],
)
def test_slack_markup_becomes_plain_text(slack_text: str, plain: str):
    assert _plain(slack_text)[0] == plain


def test_mentions_are_the_addressees_in_order_once_each():
    assert _plain("<@U2> <@U1> then <@U2> again")[1] == ("Ben Ito", "Ann")


def test_a_permalink_is_read_with_its_thread_and_written_back_the_same():
    reply = "https://acme.slack.com/archives/C0123ABCD/p1712345678123456?thread_ts=1712345600.000100&cid=C0123ABCD"
    link = parse_permalink(f"<{reply}|a reply>")
    assert (link.host, link.channel_id, link.ts, link.thread_ts) == (
        "acme.slack.com",
        "C0123ABCD",
        "1712345678.123456",
        "1712345600.000100",
    )
    assert permalink("https://acme.slack.com/", link.channel_id, link.ts, link.thread_ts) == reply
    top = parse_permalink("https://acme.slack.com/archives/C0123ABCD/p1712345678123456")
    assert top.thread_ts is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "https://acme.slack.com/archives/C0123ABCD",
        "https://acme.slack.com/archives/C0123ABCD/p123",
        "ftp://acme.slack.com/archives/C0123ABCD/p1712345678123456",
        "https://acme.slack.com/archives/C0123ABCD/p1712345678123456?thread_ts=soon",
    ],
)
def test_a_malformed_link_is_refused_with_an_example_of_a_good_one(text: str):
    with pytest.raises(MalformedLinkError, match="link"):
        parse_permalink(text)
