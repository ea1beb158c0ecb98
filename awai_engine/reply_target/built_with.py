"""What the reply-target model was built with, against what runs here.

Why: the fitting script rebuilds ``model.json`` bit for bit only with the same Python, numpy and
scikit-learn (session 20 found weights 2e-15 apart under other versions) and the same feature
tables; the file records them so a rebuild, and ``awai doctor``, can say "built with other
versions" instead of silently differing. Nothing here imports scikit-learn: its version is read
from the installed package's metadata.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version

import numpy as np

LIBRARIES = ("python", "numpy", "scikit-learn")
"""The versions a fit depends on, in the order they are said."""


def installed_versions() -> dict[str, str]:
    """The versions of :data:`LIBRARIES` in this process's environment."""
    try:
        learn = version("scikit-learn")
    except PackageNotFoundError:
        learn = "not installed"
    return {"python": platform.python_version(), "numpy": np.__version__, "scikit-learn": learn}


def differences(recorded: Mapping[str, str], running: Mapping[str, str]) -> list[str]:
    """Each entry of ``recorded`` whose value ``running`` does not share, as "name old → new"
    (a name ``running`` lacks is not compared)."""
    return [
        f"{name} {value} → {running[name]}"
        for name, value in recorded.items()
        if name in running and running[name] != value
    ]
