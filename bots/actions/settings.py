"""The actions' settings: the ``readings`` section (``AWAI_READINGS__…``) of the one settings
object, composed in :mod:`bots.settings`; one value for every platform, as the actions are one."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ReadingSettings(BaseModel):
    """How readings asked for on Slack and Discord are answered."""

    duplicate_window_seconds: float = Field(
        60.0,
        ge=0,
        le=3600,
        description=(
            "Asking again within this is answered once, whichever process gets it: the same"
            " person asking for the same message's reading, or anyone sharing a message's"
            " reading while it is being shared."
        ),
    )
