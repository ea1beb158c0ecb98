"""Which organisation each workspace belongs to, remembered from Slack's own requests.

Why: Bolt finds an installation by enterprise id, team id and whether the install is org-wide,
and every request carries all three; a scheduled digest has only the channel key's workspace id.
Looking it up with ``enterprise_id=None`` finds nothing for a workspace of an Enterprise Grid
(its installation is keyed by the organisation too) and nothing at all for an org-wide install.
So the three are remembered, in AWAI's database next to slack_sdk's installation tables (created
the same way), the first time each workspace is seen by a process.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from sqlalchemy import Boolean, Column, Engine, Float, MetaData, String, Table, delete, select


@dataclass(frozen=True)
class TeamKey:
    """What Bolt's authorize needs to find a workspace's installation."""

    enterprise_id: str | None
    team_id: str | None
    is_enterprise_install: bool


class TeamRegistry:
    def __init__(self, engine: Engine, table_name: str = "awai_slack_teams") -> None:
        self.engine = engine
        self.metadata = MetaData()
        self.table = Table(
            table_name,
            self.metadata,
            Column("workspace", String(32), primary_key=True),
            Column("enterprise_id", String(32)),
            Column("team_id", String(32)),
            Column("is_enterprise_install", Boolean, nullable=False),
            Column("seen_at", Float, nullable=False),
        )
        self._known: dict[str, TeamKey] = {}
        self._lock = threading.Lock()

    def create_tables(self) -> None:
        self.metadata.create_all(self.engine)

    def remember(self, workspace: str, key: TeamKey) -> None:
        """Keep ``key`` for ``workspace`` (a channel key's workspace id); a no-op once known."""
        with self._lock:
            if self._known.get(workspace) == key:
                return
        with self.engine.begin() as connection:
            connection.execute(delete(self.table).where(self.table.c.workspace == workspace))
            connection.execute(
                self.table.insert().values(
                    workspace=workspace,
                    enterprise_id=key.enterprise_id,
                    team_id=key.team_id,
                    is_enterprise_install=key.is_enterprise_install,
                    seen_at=time.time(),
                )
            )
        with self._lock:
            self._known[workspace] = key

    def lookup(self, workspace: str) -> TeamKey | None:
        with self._lock:
            known = self._known.get(workspace)
        if known is not None:
            return known
        with self.engine.connect() as connection:
            row = connection.execute(
                select(self.table).where(self.table.c.workspace == workspace)
            ).one_or_none()
        if row is None:
            return None
        key = TeamKey(row.enterprise_id, row.team_id, bool(row.is_enterprise_install))
        with self._lock:
            self._known[workspace] = key
        return key

    def forget(self, workspace: str) -> None:
        with self._lock:
            self._known.pop(workspace, None)
        with self.engine.begin() as connection:
            connection.execute(delete(self.table).where(self.table.c.workspace == workspace))
