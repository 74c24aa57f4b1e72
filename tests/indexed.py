"""A corpus laid out as data/ is (reports, commands, conversations, elog/SwissFEL), its
settings and its four collections indexed in this process: what the tests that ask every
collection at once share."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from indexer.config import Settings, settings_from_dict
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.context import QueryContext

COLLECTIONS = ("reports", "commands", "conversations", "elog")
DATA = Path(__file__).resolve().parent.parent / "data"


def settings_for(root: Path, index: Path) -> Settings:
    """Settings for the corpus at ``root`` laid out as data/ is, its indexes in ``index``."""
    raw: dict[str, Any] = {
        "sources": {
            "reports": str(root / "reports"),
            "commands": str(root / "commands"),
            "conversations": str(root / "conversations"),
            "elog": str(root / "elog/SwissFEL"),
        },
        "index": {"dir": str(index)},
        "elog": {"rerank": "lexical"},
    }
    return settings_from_dict(raw, base=root)


def indexed(settings: Settings) -> QueryContext:
    """Every collection built (one process, no pool), and a context that reads them."""
    for name in COLLECTIONS:
        syncer = Syncer(settings, get_source(name))
        syncer.parallel = False
        syncer.reconcile()
    return QueryContext.from_settings(settings)


def indexed_sample(tmp: Path) -> QueryContext:
    """A copy of the sample data in data/ under ``tmp``, every collection indexed."""
    shutil.copytree(DATA, tmp / "data")
    return indexed(settings_for(tmp / "data", tmp / "index"))
