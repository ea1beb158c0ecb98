"""Channels: each a SQL row naming its Chroma collection, embedding model and revision.

A channel is bound to the model that embedded it: vectors of two models are not comparable, so a
channel opened with another model is refused with the two ways out (configure the old model, or
re-embed the channel) rather than mixed.
"""

from __future__ import annotations

from sqlalchemy import delete, select

from awai_engine.embedding_backends import configuration_for
from awai_engine.ports import ChannelInfo
from storage.errors import EmbeddingMismatchError
from storage.parts import StorePart
from storage.queries import count_utterances
from storage.sql import ChannelRow
from storage.vectors import collection_name


class Channels(StorePart):
    def ensure(self, channel: str, embedding_model: str, dimension: int) -> ChannelInfo:
        """Create the channel on first use; refuse a model that differs from the channel's own."""
        with self.db.read() as session:
            row = self.db.channel(session, channel)
        if row is None:
            # The collection first: a crash before the row leaves an empty collection that the
            # next attempt reuses, never a channel row without its collection.
            self.vectors.create(collection_name(channel), channel)
            with self.db.session() as session:
                row = self.db.channel(session, channel)  # another writer may have won
                if row is None:
                    row = ChannelRow(
                        key=channel,
                        collection=collection_name(channel),
                        embedding_model=embedding_model,
                        dimension=dimension,
                        revision=0,
                    )
                    session.add(row)
        if (row.embedding_model, row.dimension) != (embedding_model, dimension):
            raise EmbeddingMismatchError(
                f"Channel {channel!r} was embedded with {row.embedding_model!r}"
                f" ({row.dimension} dimensions), but the configured model is {embedding_model!r}"
                f" ({dimension}). Set {configuration_for(row.embedding_model or '')} or re-embed"
                f" the channel with the configured model: `awai reembed {channel}`."
            )
        return ChannelInfo(row.key, row.embedding_model, row.dimension)

    def keys(self) -> list[str]:
        with self.db.read() as session:
            return list(session.scalars(select(ChannelRow.key).order_by(ChannelRow.key)))

    def info(self, channel: str) -> ChannelInfo | None:
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            return ChannelInfo(row.key, row.embedding_model, row.dimension) if row else None

    def message_count(self, channel: str) -> int:
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            return 0 if row is None else count_utterances(session, row.id)

    def drop(self, channel: str) -> None:
        """Remove a whole channel from both stores (uninstall, leaving a guild)."""
        with self.locks(channel):
            with self.db.session() as session:
                row = self.db.channel(session, channel)
                if row is None:
                    return
                collection = row.collection
                session.execute(delete(ChannelRow).where(ChannelRow.id == row.id))
            self.vectors.drop(collection)
            self.read_model.discard(channel)
