"""The clustering's compiled libraries, loaded on import: named in the re-clustering workers'
fork-server preload (``chains.PRELOAD``), so every worker it forks inherits them.

Why a module of its own: a preload names modules, and naming ``hdbscan._hdbscan_tree`` there
ran the ``hdbscan`` package's ``__init__`` (scikit-learn and the rest, see ``hdbscan_core``) in
the fork server and so in every worker. Importing the routines costs a second or more, which
each worker would pay again if the server did not.
"""

from __future__ import annotations

import scipy.sparse.csgraph  # noqa: F401  (the knn-graph tree's spanning tree and components)

from awai_engine.schemas import hdbscan_core

hdbscan_core.linkage()
hdbscan_core.tree()
