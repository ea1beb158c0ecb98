"""Who may see what: each stored message's visibility scope, and the view of a channel one asker has.

Why scopes live in the engine: a channel (``platform:workspace:channel``) can hold messages that
not everyone who reads the channel may see (a Discord private thread is stored in its parent's
channel, so that its members' readings can recall the channel's words). Each message therefore
carries a scope: :data:`CHANNEL_SCOPE` for "whoever may read the channel", or an opaque name the
adapter chose (a private thread's id). The engine knows no platform: adapters decide, by the
platform's own rules, which scopes an asker may read and pass them as :class:`Scopes` to every
read and digest entry point, which take no default.

A reading for an asker is made from their :class:`View` of the channel: the channel with every
message outside their scopes left out, positions renumbered. So the reading of message ``i`` is a
pure function of the messages at or before ``i`` that the asker may see, and messages in scopes
they may not see change nothing of it, not even a distance or a position.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from awai_engine.timeline import Timeline
from awai_engine.values import CHANNEL_SCOPE, Value

__all__ = ["CHANNEL_SCOPE", "EVERYTHING", "Scopes", "TimelineViews", "View"]

VIEWS_PER_CHANNEL = 4
"""Restricted views kept per channel: each holds a copy of the visible rows (a private thread's
members and everyone else are two views; more combinations are rebuilt when asked again)."""


class Scopes(Value):
    """The visibility scopes of one channel an asker may read; ``names=None`` means all of them.

    All scopes belong to the operator of the data folder (the terminal). A platform asker gets
    :meth:`channel` plus the private scopes the platform says they may read; a post everyone in a
    place will see gets the intersection with what everyone there may read (:meth:`__and__`).
    """

    names: frozenset[str] | None

    @classmethod
    def everything(cls) -> Scopes:
        """Every scope: for the operator, who owns the data folder and sees all of it."""
        return cls(names=None)

    @classmethod
    def channel(cls, *private: str) -> Scopes:
        """What everyone who may read the channel sees, plus the given private scopes."""
        return cls(names=frozenset({CHANNEL_SCOPE, *private}))

    def allows(self, scope: str) -> bool:
        return self.names is None or scope in self.names

    def covers(self, scopes: frozenset[str]) -> bool:
        """Whether every one of ``scopes`` is readable (then the view is the whole channel)."""
        return self.names is None or scopes <= self.names

    def __and__(self, other: Scopes) -> Scopes:
        """What both may read: a post shown to an audience holds only what all of it may see."""
        if self.names is None:
            return other
        if other.names is None:
            return self
        return Scopes(names=self.names & other.names)


EVERYTHING = Scopes.everything()
"""Every scope of every channel: what the operator of the data folder (the terminal) reads."""


@dataclass(frozen=True)
class View:
    """One asker's view of a channel: its timeline, and whether anything was left out of it.

    ``restricted`` views are rebuilt from the visible messages alone, so whatever is derived from
    them (schemas included) is clustered from those messages, never taken from a record made on
    the whole channel.
    """

    timeline: Timeline
    restricted: bool
    key: frozenset[str] | None = None


@dataclass
class _Built:
    base: Timeline
    seen: int  # messages of ``base`` looked at so far
    view: Timeline


@dataclass
class TimelineViews:
    """Restricted views of channels, kept in step with their channel's timeline.

    A channel's timeline only grows in place (any other change builds a new one, see
    :class:`~awai_engine.timeline.Timeline`), so a view catches up by appending the newly visible
    messages, and is rebuilt when its channel's timeline was replaced.

    Nothing here outlives the read model it was made from: a retired timeline (one the read model
    let go of, :attr:`~awai_engine.timeline.Timeline.retired`) is never kept, and the engine has
    the channel forgotten when its read model goes. A reading that got its timeline just before
    it was retired still gets its view, made for it alone (and retired itself, so the schema
    indexes do not keep it either): the check of the flag and the keeping are under the lock
    :meth:`forget` takes, and the read model sets the flag before it has the channel forgotten,
    so a retired timeline is either refused here or dropped by that forget.
    """

    _views: dict[str, OrderedDict[frozenset[str], _Built]] = field(default_factory=dict)
    _scopes: dict[str, tuple[Timeline, int, frozenset[str]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def scopes_of(self, channel: str, timeline: Timeline) -> frozenset[str]:
        """Every scope the channel's messages carry (one pass, then kept up with appends)."""
        with self._lock:
            known = self._scopes.get(channel)
            if known is not None and known[0] is timeline:
                base, seen, found = known
            else:
                base, seen, found = timeline, 0, frozenset()
            count = len(timeline.messages)
            if seen < count:
                found = found | set(timeline.scopes[seen:count])
            if not timeline.retired:
                self._scopes[channel] = (base, count, found)
            return found

    def view(self, channel: str, timeline: Timeline, scopes: Scopes) -> View:
        """The asker's view: the timeline itself when they may read all of it."""
        if scopes.covers(self.scopes_of(channel, timeline)):
            return View(timeline=timeline, restricted=False)
        assert scopes.names is not None
        key = scopes.names
        with self._lock:
            if timeline.retired:  # for this reading alone (see the class)
                built = _new(timeline)
                built.view.retired = True
                _catch_up(built, key)
                return View(timeline=built.view, restricted=True, key=key)
            built_views = self._views.setdefault(channel, OrderedDict())
            known = built_views.get(key)
            if known is None or known.base is not timeline:
                if known is not None:
                    known.view.retired = True
                known = built_views[key] = _new(timeline)
            built = known
            built_views.move_to_end(key)
            while len(built_views) > VIEWS_PER_CHANNEL:
                built_views.popitem(last=False)[1].view.retired = True
            _catch_up(built, key)
            return View(timeline=built.view, restricted=True, key=key)

    def forget(self, channel: str) -> None:
        """Drop a channel's views (after a removal, or when its read model goes: no words it
        dropped stay in memory); each view's timeline is retired with it."""
        with self._lock:
            for built in self._views.pop(channel, OrderedDict()).values():
                built.view.retired = True
            self._scopes.pop(channel, None)

    def channels(self) -> list[str]:
        """The channels a view or a scope list is held for."""
        with self._lock:
            return list(dict.fromkeys([*self._views, *self._scopes]))


def _new(base: Timeline) -> _Built:
    """An empty view of ``base``, to catch up."""
    view = Timeline(dimension=base.dimension, revision=base.revision, index=base.index)
    return _Built(base=base, seen=0, view=view)


def _catch_up(built: _Built, scopes: frozenset[str]) -> None:
    """Append the messages of the base timeline that the view has not looked at yet."""
    base, view = built.base, built.view
    count = len(base.messages)
    for message in base.messages[built.seen : count]:
        if message.ref.scope not in scopes:
            continue
        position = len(view.messages)
        rows = base.rows_of(message.ref.position)
        view.append(
            message.ref.model_copy(update={"position": position}),
            message.text,
            message.summary,
            message.thoughts,
            base.vectors[rows.start : rows.stop],
            message.addressees,
        )
    built.seen = count
    view.revision = base.revision
