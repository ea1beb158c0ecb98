"""HDBSCAN's compiled tree routines, imported without the ``hdbscan`` package's ``__init__``.

Why: clustering uses four compiled functions of hdbscan (single-linkage labels, the condensed
tree, its stabilities and excess-of-mass selection, and Prim's tree). Importing any of them the
usual way runs ``hdbscan/__init__.py``, which imports its estimator and with it scikit-learn,
much of scipy, joblib, narwhals and rich: 1,150 modules and +105 MiB of resident memory (70 of
it anonymous), against +1 MiB for the compiled modules alone. A bot clusters a speaker on demand
as soon as a reading meets new messages, so it kept all of that for the rest of its life: a bot
holding a 100,000-message channel took 405 MiB after a live message, 323 without.

The compiled modules import ``hdbscan.dist_metrics``, and that import loads the parent package
first, so a bare package stands in for ``hdbscan`` while they load and is removed after: a
later ``import hdbscan`` (a benchmark comparing against its estimator) runs the real
``__init__``, which finds these modules loaded and uses them. Where ``hdbscan`` is already
imported, its own modules are used. Two limits, neither met by AWAI's own code, which never
imports the package: the real package loaded after this lacks these three submodules as
attributes (``from hdbscan import dist_metrics`` works, ``hdbscan.dist_metrics`` does not); and
an ``import hdbscan`` in another thread while the stand-in is in place would get the stand-in.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from functools import cache
from typing import Any

_PACKAGE = "hdbscan"
_loading = threading.Lock()  # readings cluster in several threads


@cache
def _module(name: str) -> Any:
    qualified = f"{_PACKAGE}.{name}"
    with _loading:
        if _PACKAGE in sys.modules:
            return importlib.import_module(qualified)
        spec = importlib.util.find_spec(_PACKAGE)
        if spec is None or spec.submodule_search_locations is None:
            raise ModuleNotFoundError(f"the {_PACKAGE} package is not installed", name=_PACKAGE)
        stand_in = types.ModuleType(_PACKAGE)
        stand_in.__path__ = list(spec.submodule_search_locations)
        sys.modules[_PACKAGE] = stand_in
        try:
            return importlib.import_module(qualified)
        finally:
            if sys.modules.get(_PACKAGE) is stand_in:
                del sys.modules[_PACKAGE]


def linkage() -> Any:
    """``hdbscan._hdbscan_linkage``: ``label`` and ``mst_linkage_core``."""
    return _module("_hdbscan_linkage")


def tree() -> Any:
    """``hdbscan._hdbscan_tree``: ``condense_tree``, ``compute_stability``, ``get_clusters``."""
    return _module("_hdbscan_tree")
