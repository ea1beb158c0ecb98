"""Implementations of :class:`awai_engine.ports.LanguageBackend`."""
