"""Small seeded corpora of reports and queries drawn from them, for randomized tests.

The text is made to be hard on a substring search: mixed case, lower-casing that changes
lengths ('İ') or depends on context ('Σ'), CJK without spaces, runs of punctuation and
white space, repeats that overlap ('aaa'), words that hold other words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

_WORDS = (
    "proxy Proxy PROXY timeout time-out TimeOut decode Decoder decoded response token tokens "
    "a aa aaa ab ba abab İstanbul istanbul ΟΔΟΣ οδός Σίσυφος straße STRASSE naïve cafe café "
    "x86_64 foo_bar 0x80072efd 2025-11-20 v1.2.3 WebSocket websocket McKinsey mckinsey "
    "the then there other whether theme e ee é 🙂 🙂🙂"
)
WORDS = tuple(_WORDS.split())
CJK = (
    "日志",
    "分析",
    "报告",
    "日志分析报告",
    "解码超时",
    "代理",
    "プロキシ",
    "会議",
    "회의",
    "中",
    "中中",
)
SEPARATORS = (
    " ",
    " ",
    " ",
    " ",
    "  ",
    ", ",
    ". ",
    ".\n",
    "\n",
    "\n\n",
    "\t",
    " - ",
    " — ",
    "->",
    "::",
    "(",
    ") ",
    "`",
    "**",
    " | ",
    "...",
    "。",
    "、",
    "，",
    "“",
    "” ",
    "\r\n",
    "/",
    "_",
    "",
)
COMMANDS = ("analyze_zoom_speech_sdk_log", "proxy-slow-meeting", "日志-command", "tls")
NAME_FORMS = ("{c}_{y}{m}{d}_v{n}", "{c}_{y}-{m}-{d}_r{n}", "report_{y}_{m}_{d}_{n}", "notes-{n}")


def _text(rng: random.Random, n_tokens: int) -> str:
    parts: list[str] = []
    if rng.random() < 0.2:
        parts.append(rng.choice(SEPARATORS))
    for _ in range(n_tokens):
        parts.append(rng.choice(CJK) if rng.random() < 0.2 else rng.choice(WORDS))
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts)


@dataclass
class Corpus:
    root: Path
    texts: dict[str, str] = field(default_factory=dict)  # "command/name.md" -> text

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        self.texts[rel] = text

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()
        del self.texts[rel]


def make_corpus(root: Path, seed: int, reports: int = 60) -> Corpus:
    """Reports under ``root``; same seed, same files."""
    rng = random.Random(seed)
    corpus = Corpus(root)
    for i in range(reports):
        command = rng.choice(COMMANDS)
        # Few distinct dates, so that ties on count and date happen.
        form = rng.choice(NAME_FORMS)
        name = form.format(
            c=command[:8],
            y=rng.choice(("2024", "2025")),
            m=rng.choice(("01", "11")),
            d=rng.choice(("05", "20")),
            n=i,
        )
        corpus.write(f"{command}/{name}.md", _text(rng, rng.randint(0, 120)))
    return corpus


def mutate(corpus: Corpus, seed: int) -> None:
    """Change, add and delete a few reports (the index then has several segments)."""
    rng = random.Random(seed)
    for rel in rng.sample(sorted(corpus.texts), k=min(5, len(corpus.texts))):
        corpus.write(rel, _text(rng, rng.randint(0, 80)))
    for rel in rng.sample(sorted(corpus.texts), k=min(3, len(corpus.texts))):
        corpus.delete(rel)
    for i in range(4):
        corpus.write(f"{rng.choice(COMMANDS)}/added_2025{i:02d}01_{seed}.md", _text(rng, 50))


def _mixed_case(rng: random.Random, s: str) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c for c in s)


def queries(corpus: Corpus, seed: int, n: int) -> list[tuple[str, str]]:
    """(kind, query) pairs drawn from the corpus text, plus a few that it does not hold."""
    rng = random.Random(seed)
    texts = [t for t in corpus.texts.values() if t.strip()]
    out: list[tuple[str, str]] = []
    kinds = (
        "substring",
        "word",
        "phrase",
        "fragment",
        "cjk",
        "punctuation",
        "mixed case",
        "reordered words",
        "absent",
    )
    while len(out) < n:
        kind = kinds[len(out) % len(kinds)]
        text = rng.choice(texts)
        if kind == "substring":
            a = rng.randrange(len(text))
            q = text[a : a + rng.randint(1, 30)]
        elif kind == "word":
            q = rng.choice(WORDS)
        elif kind == "phrase":
            q = rng.choice(WORDS) + rng.choice(SEPARATORS) + rng.choice(WORDS + CJK)
        elif kind == "fragment":
            w = rng.choice(WORDS + CJK)
            a = rng.randrange(len(w))
            q = w[a : a + rng.randint(1, len(w))]
        elif kind == "cjk":
            q = rng.choice(CJK)
            q = q[rng.randrange(len(q)) :]
        elif kind == "punctuation":
            q = rng.choice(SEPARATORS) + rng.choice(SEPARATORS)
        elif kind == "mixed case":
            a = rng.randrange(len(text))
            q = _mixed_case(rng, text[a : a + rng.randint(2, 20)])
        elif kind == "reordered words":
            q = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(CJK)}"
        else:
            q = rng.choice(("zzqx", "proxy zzqx", "日志 zzqx", "--->", "aaaaaaaaaaaaaaaa"))
        if q.strip():
            out.append((kind, q))
    return out
