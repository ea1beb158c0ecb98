"""Per-speaker preconceptions (spec §4): clustered, versioned, recalled before a message, digested.

Start at :mod:`awai_engine.schemas.service`; :mod:`awai_engine.schemas.runs` explains why a
schema a reading recalls can never change afterwards.
"""
