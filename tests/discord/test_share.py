"""A Discord reading is private, with *Share* (once per message) and *Details* buttons.

The buttons are pressed as Discord sends a press: an INTERACTION_CREATE of type 3 through
discord.py's own ``ConnectionState.parse_interaction_create``, which finds the dynamic item by
its ``custom_id`` on the message that carries it.
"""

from __future__ import annotations

from typing import Any

from bots.discord.keys import channel_key
from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import BOB, CAROL, SNOWFLAKES

EPHEMERAL = 64
KEY = channel_key(payloads.GUILD_ID, payloads.CHANNEL_ID)


async def _private_reading(harness: Harness) -> tuple[dict[str, Any], dict[str, Any]]:
    """A conversation, then Ann's "Read with AWAI" on its last message: (message, follow-up)."""
    lines = [
        (payloads.ANN, "The payment retries double-charge customers when the load is high."),
        (BOB, "Can we cap the retries at three?"),
        (CAROL, "Agreed, as long as we log every retry we drop."),
    ]
    datas = [
        payloads.message(SNOWFLAKES.next(), author=person, content=text) for person, text in lines
    ]
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), datas)
    await harness.post(*datas)
    await harness.interact(payloads.interaction(data=payloads.message_menu(datas[-1])))
    (followup,) = [r.body for r in harness.server.calls("POST", "/webhooks/")]
    return datas[-1], followup


def _buttons(followup: dict[str, Any]) -> dict[str, str]:
    rows = followup.get("components") or []
    return {
        button["label"]: button.get("custom_id") or button["url"]
        for row in rows
        for button in row["components"]
    }


async def _press(harness: Harness, followup: dict[str, Any], custom_id: str, person=payloads.ANN):
    """Press a button of the ephemeral reading, as the gateway delivers it."""
    carrier = payloads.message(SNOWFLAKES.next(), author=payloads.BOT_USER)
    carrier.update(components=followup["components"], flags=EPHEMERAL)
    data = payloads.interaction(data={"custom_id": custom_id, "component_type": 2}, person=person)
    data.update(type=3, message=carrier)
    await harness.interact(data)


async def test_the_reading_is_private_with_share_and_details_buttons(harness: Harness):
    _, followup = await _private_reading(harness)

    assert followup["flags"] & EPHEMERAL
    buttons = _buttons(followup)
    assert set(buttons) == {"Share", "Details"}
    assert all(custom_id.startswith("awai:") for custom_id in buttons.values())
    assert harness.server.calls("POST", "/messages") == [], "nothing posted for everyone"


async def test_share_posts_once_as_a_reply_and_a_second_share_links_to_it(harness: Harness):
    message, followup = await _private_reading(harness)
    share = _buttons(followup)["Share"]

    await _press(harness, followup, share)
    await _press(harness, followup, share, person=BOB)

    (posted,) = [r for r in harness.server.calls("POST", "/messages") if "/channels/" in r.path]
    assert posted.body["content"] == f"Shared by <@{payloads.ANN['id']}>"
    assert str(posted.body["message_reference"]["message_id"]) == message["id"]
    assert posted.body["allowed_mentions"]["parse"] == []
    told = [r.body.get("content", "") for r in harness.server.calls("POST", "/webhooks/")]
    assert told[-2].startswith("Shared: ") and "already shared" in told[-1]
    assert harness.runtime.posts.shared_reading(KEY, message["id"]) is not None


async def test_someone_asking_after_a_share_gets_a_link_to_the_shared_reading_not_a_share(
    harness: Harness,
):
    message, followup = await _private_reading(harness)
    await _press(harness, followup, _buttons(followup)["Share"])
    (_shared_post,) = [
        r for r in harness.server.calls("POST", "/messages") if "/channels/" in r.path
    ]

    await harness.interact(payloads.interaction(data=payloads.message_menu(message), person=BOB))

    later = harness.server.calls("POST", "/webhooks/")[-1].body
    assert later["flags"] & EPHEMERAL
    buttons = _buttons(later)
    assert "Share" not in buttons, "a message has one shared reading"
    shared = harness.runtime.posts.shared_reading(KEY, message["id"])
    assert shared is not None
    assert buttons["See the shared reading"] == (
        f"https://discord.com/channels/{payloads.GUILD_ID}/{shared.place}/{shared.post_id}"
    )
    assert "Details" in buttons
    assert (
        len([r for r in harness.server.calls("POST", "/messages") if "/channels/" in r.path]) == 1
    )


async def test_details_answer_privately_with_the_numbers(harness: Harness):
    _, followup = await _private_reading(harness)

    await _press(harness, followup, _buttons(followup)["Details"])

    details = harness.server.calls("POST", "/webhooks/")[-1].body
    assert details["flags"] & EPHEMERAL
    shown = str(details["embeds"])
    assert "Thoughts" in shown and "Read offline" in shown
    assert harness.server.calls("POST", "/messages") == []
