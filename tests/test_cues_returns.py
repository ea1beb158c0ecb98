"""Whether a message says it goes back to something raised earlier
(:mod:`awai_engine.cues.returns`), and not to a place, a routine or a state.
"""

from __future__ import annotations

import pytest

from awai_engine.cues.returns import says_returns


@pytest.mark.parametrize(
    ("text", "returns"),
    [
        ("Back to the replica disk — is it still filling up?", True),
        ("So, back to the refund question: who owns it?", True),
        ("@maya getting back to your point about the cache", True),
        ("話を戻すと、レプリカのディスクはまだ増えていますか？", True),
        ("I'm back to square one with this build.", False),
        ("Sent the feedback to the team.", False),
    ],
)
def test_back_to_returns_only_where_a_message_opens_with_it(text: str, returns: bool) -> None:
    assert says_returns(text) is returns


@pytest.mark.parametrize(
    ("text", "returns"),
    [
        ("Returning to the office tomorrow, so I'll test it there.", False),
        ("Back to square one, sadly.", False),
        ("back to work now, ping me if it breaks", False),
        ("Anyway, back to normal: the build is green.", False),
        ("Returning to Berlin next week.", False),
        ("Returning to the migration plan: who signs off?", True),
        ("Back to what Ben said about the cache.", True),
        ("ところで、話を戻すと、キャッシュはどうなりましたか？", True),
        ("さて、さっきの件ですが、まだ直っていません。", True),
        ("で、元の話に戻ると…", True),
        ("ところで、明日は休みです。", False),
        ("I'm going back to work tomorrow, so ping me there.", False),
        ("ok, so coming back to the cache question, who owns it?", True),
    ],
)
def test_going_back_to_a_place_or_a_state_returns_to_no_topic_and_japanese_lead_ins_count(
    text: str, returns: bool
) -> None:
    assert says_returns(text) is returns


def test_again_in_passing_returns_to_nothing() -> None:
    assert not says_returns("I'm going to the beach again!")
    assert not says_returns("また明日")
    assert says_returns("The crash happened again last night.")
    assert says_returns("Coming back to the refund question")
