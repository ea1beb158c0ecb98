"""The Discord adapter: gateway events → utterances → engine; readings and digests → embeds.

Where a message lives, in AWAI's words:
- a guild text channel is one AWAI channel, key ``discord:<guild id>:<channel id>``;
- a thread is its own *line* inside its parent channel: its messages carry the parent's key and
  ``thread_root`` = the thread's id. A thread started from a message has the id of that message,
  so the root is the message the thread grew from (spec: "the thread's earlier messages, root
  included"), and recall by meaning reaches the rest of the parent channel, as it should;
- message id = the snowflake as a string; ``ts`` = the snowflake's time.

Modules, one job each: ``keys`` (channel keys and lines), ``links`` (jump links), ``plaintext``
(Discord markdown → plain text), ``ingest`` (message → utterance), ``access`` (who may read what),
``embeds`` (reading and digest → embeds within Discord's limits), ``backfill`` (a channel's or
thread's history as the backfill action reads it), ``threads`` (a channel's active and archived
threads), ``catchup`` (a server as the catch-up action reads it), ``privacy`` (a deleted
thread's messages, private threads' scopes), ``settings`` (the ``discord``
section), ``messages`` (what AWAI says), ``interactions`` (acknowledge privately, refuse, report;
the command tree whose error handler answers), ``sync`` (the gateway's messages, edits and
deletes into the store), ``readings``, ``mentions`` (``@AWAI read``), ``share`` (the reading's
buttons, and the one shared reading), ``digests`` (``/awai digest``, the schedule's channels and
how a digest is posted), ``backfills`` and ``forget`` (one command each), ``cog`` (the thin layer discord.py calls), ``bot`` (the client).
"""
