"""The Slack adapter: Slack payloads → utterances → engine, readings and digests → Block Kit.

``app.py`` composes it; ``listeners/`` translate requests; everything slow runs in ``workers.py``
after Slack has been acknowledged.
"""
