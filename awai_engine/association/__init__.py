"""Association: which earlier thoughts a message reaches back to, outside its flow (spec §3).

Recall runs in named stages over one message, each a module with one entry function, all reading
the same :class:`~awai_engine.association.query.Query` (the message, what the search found, the
settings) and :class:`~awai_engine.association.query.Situation` (who it is said to, which
conversation it belongs to, whether it reaches for the past):

1. ``addressing`` — the latest lines of the people the message addresses, of those who addressed
   its speaker, and the speaker's own: who a line is said to is the strongest sign of what it
   answers in a busy room;
2. ``far`` — slots for the far past, when meaning and rare words together stand out;
3. ``meaning`` — the rest by meaning, against θ(d) and the bars of the exchange and conversation;
4. ``activation`` — each recalled thought's ACT-R base-level activation;
5. ``admission`` — a gate learned from human annotation leaves out the items unlikely to be in
   the message's own conversation;
6. ``reply_targets`` — the reply-target scorer's best candidates added after recall, so that the
   message a reading names is one its reader is shown.

``recall.py`` runs stages 1–5; ``reaching.py``, ``conversation.py`` and (outside the package,
shared with the reply-target scorer) ``awai_engine/exchange.py`` read the situation.
``settings.py`` holds the operator's settings (the ``association`` and ``activation`` sections of
the one AWAI settings object) and the fitted recall rules only the bench varies.

Everything here looks only at positions before the message (and the message itself): the
context is a pure function of the prefix, the product's invariant.
"""
