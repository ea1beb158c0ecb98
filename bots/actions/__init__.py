"""Each thing a person asks of AWAI on a chat platform, written once for Slack and Discord.

One module per action, one entry function each, against the small port the layer owns
(:mod:`bots.actions.platform`); Slack and Discord keep their listeners and cogs, their formatting
and their implementation of the port (``bots/slack/platform.py``, ``bots/discord/platform.py``):

- :mod:`~bots.actions.answer` — where every route asking about a message ends: it runs the
  reading action asked for and says how it ended, for the platform to put in its words;
- :mod:`~bots.actions.read` — read privately (every "Read with AWAI", ``/awai read``,
  ``@AWAI read``); :mod:`~bots.actions.reading` is where such a request becomes a reading;
- :mod:`~bots.actions.share` — share a reading for everyone, once per message;
- :mod:`~bots.actions.details` — the numbers behind a reading;
- :mod:`~bots.actions.forget` — forget me;
- :mod:`~bots.actions.edit` — an edited message kept as it now stands (stored if AWAI did not
  have it), its words withdrawn when the edit took them off the platform;
- :mod:`~bots.actions.redact` — AWAI's posts lose their text after a message is removed;
- :mod:`~bots.actions.purge` — a workspace, server or channel that removed AWAI is purged;
- :mod:`~bots.actions.digest` — a channel's digest, asked for or on a schedule;
- :mod:`~bots.actions.backfill` and :mod:`~bots.actions.catchup` — a place's history read in
  (for those who manage the place), and what was said while AWAI was away.

So a fix to a privacy promise (nobody sees what they could not see; a deleted message leaves
AWAI's posts too) lands on both platforms at once.
"""
