"""Generate a large, deterministic corpus of reports, commands and conversations.

    python bench/gen_corpus.py OUT_DIR --reports 10000 --commands 200 --conversations 2000 \
        [--report-kb 4] [--seed 1]

The same arguments always give the same files, byte for byte (stdlib only, no network).
OUT_DIR gets ``reports/``, ``commands/``, ``conversations/``, a ``trove.toml`` pointing at
them (``[index] dir = "index"``) and a ``corpus.json`` recording the arguments, so that a
benchmark can tell whether an existing corpus is the one it asked for.

Also importable: ``generate(out_dir, reports=10000, ...)``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

MANIFEST = "corpus.json"
GENERATOR_VERSION = 1

# --------------------------------------------------------------------------- vocabulary

# fmt: off
# The most frequent ranks: what any English prose is mostly made of.
_FUNCTION_WORDS = (
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "on", "was", "with", "as",
    "be", "by", "this", "are", "at", "from", "or", "an", "not", "but", "which", "have", "has",
    "were", "all", "when", "after", "before", "then", "there", "their", "it's", "its", "only",
    "one", "two", "three", "first", "also", "more", "than", "no", "each", "both", "same", "still",
    "again", "every", "other", "into", "out", "over", "under", "between", "during", "while",
    "because", "so", "if", "we", "they", "our", "you", "can", "could", "would", "should", "may",
    "might", "will", "does", "did", "do", "been", "being", "had",
)

# Domain words the sample data is full of; they get the ranks just after the function words.
_DOMAIN_WORDS = (
    "session", "token", "decode", "timeout", "proxy", "meeting", "join", "slow", "websocket",
    "reconnect", "frame", "drops", "audio", "client", "gateway", "resolver", "dns", "vpn",
    "tunnel", "tls", "handshake", "certificate", "kerberos", "ntlm", "negotiate", "pac", "wpad",
    "connect", "latency", "jitter", "packet", "loss", "retry", "backoff", "sdk", "log", "logs",
    "analysis", "report", "customer", "ticket", "root", "cause", "confidence", "high", "medium",
    "low", "finding", "findings", "recommendation", "summary", "environment", "windows", "macos",
    "linux", "version", "build", "stream", "transcript", "transcription", "asr", "speech",
    "websocket", "close", "code", "heartbeat", "keepalive", "idle", "lease", "refresh", "oauth",
    "grant", "scope", "expired", "clock", "skew", "validation", "signature", "issuer", "audience",
    "redirect", "callback", "sso", "saml", "okta", "entra", "tenant", "policy", "firewall",
    "inspection", "ssl", "interception", "bypass", "direct", "route", "split", "full", "region",
    "edge", "relay", "turn", "stun", "udp", "tcp", "port", "mtu", "fragmentation", "throughput",
    "bandwidth", "cpu", "memory", "thread", "queue", "buffer", "backlog", "p95", "p99", "median",
    "percentile", "spike", "regression", "baseline", "pilot", "rollout", "canary", "hotfix",
    "patch", "upgrade", "downgrade", "config", "registry", "setting", "flag", "feature",
    "planning", "sprint", "backlog", "milestone", "owner", "action", "item", "follow-up", "review",
    "retro", "weekly", "standup", "estimate", "risk", "blocker", "dependency", "escalation",
    "incident", "outage", "degradation", "mitigation", "workaround", "monitor", "alert",
    "dashboard", "metric", "trace", "span", "sample", "capture", "wireshark", "pcap", "har",
    "fiddler", "netsh", "curl", "openssl", "nslookup", "dig", "traceroute", "ping", "ipconfig",
    "ifconfig", "route", "arp",
)

_SYLLABLES = (
    "ka", "ri", "to", "mo", "na", "se", "lu", "pe", "vi", "da", "ko", "ra", "ne", "zu", "ta",
    "shi", "ma", "lo", "fe", "gu", "bi", "no", "te", "sa", "ru", "el", "an", "or", "in", "us",
    "ex", "al", "on", "ir", "ul", "ve", "tra", "pro", "con", "dis", "re", "sub", "inter", "pre",
    "per", "com", "ter", "str", "pl", "gr", "br", "cl", "fr", "sk", "sp", "st", "th", "ch", "sh",
    "qu", "wh",
)

_CUSTOMERS = (
    "Contoso", "Fabrikam", "Litware Inc.", "Wide World Importers", "Acme Corp", "Northwind",
    "Tailspin Toys", "Adventure Works", "Woodgrove Bank", "Proseware", "Lamna Healthcare",
    "Margie's Travel", "Trey Research", "Alpine Ski House", "Coho Winery", "Fourth Coffee",
    "Relecloud", "VanArsdel", "Humongous Insurance", "Blue Yonder Airlines", "McKinsey",
)
_HOST_PREFIX = (
    "asr", "zoom-sig", "gw", "proxy", "proxy-emea", "proxy-apac", "edge", "auth", "sso",
    "turn", "relay", "media", "api", "login", "wpad", "dns", "vpn", "ocsp", "crl",
)
_HOST_REGION = ("jp1", "us-east-1", "us-west-2", "eu2", "emea", "sg3", "au1", "br1", "in2", "de1")
_HOST_DOMAIN = (
    "gw.example.net", "corp.contoso.com", "litware.local", "zoom.example.com",
    "fabrikam.internal", "corp.example", "cdn.example.org", "auth.example.net",
)
_ERRORS = (
    "407 Proxy Authentication Required", "502 Bad Gateway", "503 Service Unavailable",
    "504 Gateway Timeout", "ERR_TUNNEL_CONNECTION_FAILED", "ERR_PROXY_CONNECTION_FAILED",
    "0x80072efd", "0x80072ee2", "0x80090326", "WSAETIMEDOUT", "WSAECONNRESET", "ECONNRESET",
    "ETIMEDOUT", "ECONNREFUSED", "close 1006", "close 1001", "close 1011", "close 4003",
    "SEC_E_UNTRUSTED_ROOT", "SEC_E_TARGET_UNKNOWN", "SEC_E_WRONG_PRINCIPAL",
    "X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "CERTIFICATE_VERIFY_FAILED",
    "ZSS-E1042 decode timeout", "ZSS-E2007 token expired", "ZSS-E3001 frame drop",
    "AADSTS700082", "AADSTS50076", "invalid_grant", "invalid_client", "NXDOMAIN", "SERVFAIL",
)
_COMPONENTS = ("net", "ws", "session", "auth", "decode", "audio", "sys", "proxy", "tls", "dns")
_EVENTS = (
    "resolve {host}", "resolve timeout after {ms} ms (resolver {ip})", "resolve ok {ip} {ms} ms",
    "open {host}:443 (handshake {ms} ms)", "CONNECT {host}:443 via {host2}:8080",
    "error {err}", "retry {n} after {ms} ms", "token validate ok ({ms} ms)",
    "token validate failed: {err}", "decode p95 {s} s, frames dropped {n}",
    "reconnect attempt {n} to {host}", "closed ({err})", "heartbeat missed ({ms} ms)",
    "PAC returned PROXY {host2}:8080; DIRECT", "TLS alert: {err}", "queue depth {n}",
)
_TOPICS = (
    "decode timeout regression", "websocket reconnect storm", "token validation failures",
    "audio frame drops at peak", "slow meeting join behind proxy", "PAC file review",
    "407 authentication loop", "TLS inspection breaks pinning", "DNS timeouts after wake",
    "VPN split tunnel misroute", "Kerberos SPN mismatch", "OAuth refresh token expiry",
    "clock skew on login", "relay fallback to TCP", "MTU blackhole on VPN",
    "weekly planning notes", "latency triage", "certificate chain incomplete",
)
_FILE_TOPICS = (
    "decode_timeout", "ws_reconnect", "token_validation", "frame_drops", "proxy_407",
    "pac_review", "tls_inspection", "dns_wake", "split_tunnel", "kerberos_spn",
    "refresh_expiry", "clock_skew", "relay_tcp", "mtu_blackhole", "latency", "cert_chain",
)
_CJK_SENTENCES = (
    "解码超时导致转写会话中断。", "代理服务器返回 407 认证错误，客户端反复重试。",
    "唤醒后第一次 DNS 解析超时十五秒。", "建议在 PAC 文件中为语音网关添加直连规则。",
    "日志分析报告已发送给客户。", "会议加入缓慢的根本原因是代理链路。",
    "令牌验证失败，时钟偏差超过五分钟。", "WebSocket 重连频繁，网络抖动明显。",
    "音频帧丢失集中在高峰时段。", "请确认 VPN 分流配置是否正确。",
    "证书链不完整，客户端无法验证服务器身份。", "负载均衡器没有保持连接粘性。",
    "プロキシ認証でループが発生しています。", "会議への参加が遅い原因を調査しました。",
    "프록시 인증 오류가 반복됩니다.", "회의 참가 지연 원인을 분석했습니다.",
)

# The report folders (and the first commands): the sample data's names, then made-up ones.
_SAMPLE_COMMANDS = (
    "analyze_zoom_speech_sdk_log", "proxy-slow-meeting-analysis-command",
    "diagnose_tls_handshake", "network-latency-triage", "oauth-token-refresh-debug",
    "summarize_weekly_planning", "log_common_parsers",
)
_VERBS = ("analyze", "diagnose", "triage", "debug", "summarize", "review", "audit", "trace",
          "inspect", "check", "compare", "collect")
_OBJECTS = ("dns_resolution", "websocket_reconnect", "pac_file", "kerberos_auth",
            "vpn_split_tunnel", "audio_frame_drops", "proxy_chain", "cert_chain",
            "sso_redirects", "relay_fallback", "mtu_path", "clock_skew", "meeting_join",
            "decode_latency", "firewall_rules", "client_crash", "har_capture", "pcap")
# fmt: on


def build_vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    """Function words, then domain words, then pseudo-words: the list order is the rank."""
    words: list[str] = []
    seen: set[str] = set()
    for w in itertools.chain(_FUNCTION_WORDS, _DOMAIN_WORDS):
        if w not in seen:
            seen.add(w)
            words.append(w)
    while len(words) < size:
        w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def zipf_cum_weights(n: int, s: float = 1.05) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + 2.7) ** s for rank in range(n)))


@dataclass(frozen=True)
class CorpusSpec:
    reports: int = 10000
    commands: int = 200
    conversations: int = 2000
    report_kb: float = 4.0
    seed: int = 1
    version: int = GENERATOR_VERSION


# --------------------------------------------------------------------------- text


class _Writer:
    """Prose, log lines and names from one seeded random stream."""

    def __init__(self, rng: random.Random, vocab: list[str], cum: list[float]) -> None:
        self.rng = rng
        self.vocab = vocab
        self.cum = cum
        self._pool: list[str] = []

    def _words(self, n: int) -> list[str]:
        if len(self._pool) < n:
            self._pool.extend(self.rng.choices(self.vocab, cum_weights=self.cum, k=4096 + n))
        out = self._pool[-n:]
        del self._pool[-n:]
        return out

    def host(self) -> str:
        r = self.rng
        return f"{r.choice(_HOST_PREFIX)}-{r.choice(_HOST_REGION)}.{r.choice(_HOST_DOMAIN)}"

    def ip(self) -> str:
        r = self.rng
        return r.choice(("10.{}.{}.{}", "192.168.{}.{}", "172.16.{}.{}", "203.0.113.{}")).format(
            r.randint(0, 255), r.randint(0, 255), r.randint(1, 254)
        )

    def sentence(self) -> str:
        r = self.rng
        words = self._words(r.randint(7, 18))
        x = r.random()
        if x < 0.12:
            words.insert(r.randrange(len(words)), f"`{self.host()}`")
        elif x < 0.22:
            words.insert(r.randrange(len(words)), f"`{r.choice(_ERRORS)}`")
        elif x < 0.30:
            words.insert(r.randrange(len(words)), f"{r.randint(2, 30000)} ms")
        words[0] = words[0].capitalize()
        return " ".join(words) + "."

    def paragraph(self, n: int | None = None) -> str:
        n = n or self.rng.randint(2, 5)
        lines, line = [], ""
        for s in (self.sentence() for _ in range(n)):
            line = f"{line} {s}" if line else s
            # Wrap like the sample data does, to keep "line" meaningful for searches.
            while len(line) > 88:
                cut = line.rfind(" ", 0, 88)
                cut = cut if cut > 0 else 88
                lines.append(line[:cut])
                line = line[cut + 1 :]
        if line:
            lines.append(line)
        return "\n".join(lines)

    def log_block(self, day: date) -> str:
        r = self.rng
        t = r.randint(0, 86000) * 1000
        lines = []
        for _ in range(r.randint(3, 8)):
            t += r.randint(1, 20000)
            hh, rest = divmod(t // 1000, 3600)
            mm, ss = divmod(rest, 60)
            event = r.choice(_EVENTS).format(
                host=self.host(),
                host2=self.host(),
                ip=self.ip(),
                err=r.choice(_ERRORS),
                ms=r.randint(3, 30000),
                n=r.randint(1, 9),
                s=round(r.uniform(0.2, 9.0), 1),
            )
            lines.append(
                f"{day.isoformat()}T{hh:02d}:{mm:02d}:{ss:02d}.{t % 1000:03d}Z "
                f"[{r.choice(_COMPONENTS)}] {event}"
            )
        return "```\n" + "\n".join(lines) + "\n```"

    def cjk(self, n: int) -> str:
        return "".join(self.rng.choice(_CJK_SENTENCES) for _ in range(n))


def _random_day(rng: random.Random) -> date:
    return date(2024, 1, 1) + timedelta(days=rng.randrange(731))


# --------------------------------------------------------------------------- collections


def command_names(rng: random.Random, n: int) -> list[str]:
    names = list(_SAMPLE_COMMANDS[:n])
    seen = set(names)
    while len(names) < n:
        verb, obj = rng.choice(_VERBS), rng.choice(_OBJECTS)
        name = f"{verb}_{obj}" if rng.random() < 0.5 else f"{verb}-{obj.replace('_', '-')}"
        if len(seen) >= len(_VERBS) * len(_OBJECTS) * 2 - 8:
            name = f"{name}-{len(names)}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _report_name(w: _Writer, prefix: str, day: date, kind: float) -> str:
    r = w.rng
    topic = r.choice(_FILE_TOPICS)
    if kind < 0.03:  # undated: no digit runs at all
        return f"{prefix}-notes-{topic}-{r.choice(('draft', 'baseline', 'followup', 'wip'))}"
    if kind < 0.06:
        return f"{prefix}_报告_{day:%Y%m%d}_{r.randint(0, 235959):06d}_v{r.randint(1, 9)}"
    pattern = r.randrange(3)
    if pattern == 0:
        return f"{prefix}_{day:%Y%m%d}_{topic}_v{r.randint(1, 9)}"
    if pattern == 1:
        return f"{prefix}-report-{day:%Y-%m-%d}-{r.choice(_CUSTOMERS).split()[0].lower()}"
    return f"{prefix}_{day:%Y_%m_%d}_{topic}"


def _report(w: _Writer, command: str, day: date | None, target: int, with_cjk: bool) -> str:
    r = w.rng
    customer = r.choice(_CUSTOMERS)
    topic = r.choice(_TOPICS)
    when = day.isoformat() if day else "undated"
    parts = [
        f"# {topic.capitalize()} — {customer} ({when})",
        (
            f"**Date:** {when}\n**Customer:** {customer}\n**Ticket:** "
            f"{r.choice(('ZSS', 'NET', 'AUTH', 'OPS'))}-{r.randint(1000, 9999)}\n"
            f"**Command:** `{command}`"
        ),
        "## Summary",
        w.paragraph(r.randint(3, 5)),
        "## Environment",
        "\n".join(
            (
                (
                    f"- SDK {r.randint(4, 6)}.{r.randint(0, 19)}.{r.randint(0, 9)}, "
                    f"{r.choice(('Windows 11 24H2', 'Windows 10 22H2', 'macOS 14.5', 'Ubuntu 22.04'))}"
                ),
                f"- Proxy: `{w.host()}:8080`" if r.random() < 0.6 else "- No explicit proxy",
                f"- VPN: {r.choice(('always-on, full tunnel', 'split tunnel', 'none'))}",
                f"- Log range: {when} {r.randint(0, 11):02d}:{r.randint(0, 59):02d} local",
            )
        ),
        "## Findings",
    ]
    size = sum(len(p) for p in parts) + 400
    if with_cjk:
        cjk = "## 总结\n\n" + w.cjk(r.randint(2, 5))
        size += len(cjk.encode())
    n = 0
    log_day = day or _random_day(r)
    while size < target:
        n += 1
        block = [f"### {n}. {w.sentence()[:-1]}", w.paragraph()]
        if r.random() < 0.6:
            block.append(w.log_block(log_day))
        if with_cjk and r.random() < 0.3:
            block.append(w.cjk(r.randint(1, 3)))
        parts.extend(block)
        size += sum(len(b) for b in block) + 2 * len(block)
    parts.append("## Recommendations")
    parts.append("\n".join(f"{i}. {w.sentence()}" for i in range(1, r.randint(3, 5))))
    if with_cjk:
        parts.append(cjk)
    return "\n\n".join(parts) + "\n"


def write_reports(root: Path, spec: CorpusSpec, vocab: list[str], cum: list[float]) -> int:
    rng = random.Random(f"{spec.seed}-reports")
    w = _Writer(rng, vocab, cum)
    commands = command_names(random.Random(f"{spec.seed}-commands-names"), 40)
    prefixes = {
        c: rng.choice((c, c.split("_")[0].split("-")[0] + "_analysis", c.replace("_", "-")))
        for c in commands
    }
    # Skewed: a few commands produce many reports, most produce a few dozen.
    command_weights = zipf_cum_weights(len(commands), s=0.8)
    target_mean = int(spec.report_kb * 1024)
    used: set[str] = set()
    for c in commands:
        (root / c).mkdir(parents=True, exist_ok=True)
    total = 0
    for _ in range(spec.reports):
        command = rng.choices(commands, cum_weights=command_weights)[0]
        day = _random_day(rng)
        kind = rng.random()
        name = _report_name(w, prefixes[command], day, kind)
        rel = f"{command}/{name}.md"
        suffix = 2
        while rel in used:
            rel = (
                f"{command}/{name}-r{suffix}.md"
                if kind < 0.03
                else f"{command}/{name}_r{suffix}.md"
            )
            suffix += 1
        used.add(rel)
        target = max(512, int(rng.gauss(target_mean, target_mean * 0.25)))
        text = _report(w, command, None if kind < 0.03 else day, target, rng.random() < 0.05)
        data = text.encode("utf-8")
        (root / rel).write_bytes(data)
        total += len(data)
    return total


def write_commands(root: Path, spec: CorpusSpec, vocab: list[str], cum: list[float]) -> int:
    rng = random.Random(f"{spec.seed}-commands")
    w = _Writer(rng, vocab, cum)
    root.mkdir(parents=True, exist_ok=True)
    names = command_names(random.Random(f"{spec.seed}-commands-names"), spec.commands)
    total = 0
    for name in names:
        title = name.replace("_", " ").replace("-", " ").title()
        tags = sorted({rng.choice(_DOMAIN_WORDS) for _ in range(rng.randint(1, 5))})
        is_dep = name == "log_common_parsers" or rng.random() < 0.04
        description = w.sentence()
        sections = [f"# {title}", w.paragraph(), "## Inputs", w.paragraph(2), "## Steps"]
        sections.extend(f"{i}. {w.sentence()}" for i in range(1, rng.randint(4, 9)))
        sections += ["## Output", w.paragraph(), w.log_block(_random_day(rng))]
        if rng.random() < 0.05:
            sections.append(w.cjk(2))
        text = (
            "---\n"
            f"title: {title}\n"
            f"description: {json.dumps(description, ensure_ascii=False)}\n"
            "tags:\n"
            + "".join(f"  - {t}\n" for t in tags)
            + f"is_dependency: {'true' if is_dep else 'false'}\n"
            f"version: {rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}\n"
            "---\n\n" + "\n\n".join(sections) + "\n"
        )
        data = text.encode("utf-8")
        (root / f"{name}.md").write_bytes(data)
        total += len(data)
    return total


def write_conversations(root: Path, spec: CorpusSpec, vocab: list[str], cum: list[float]) -> int:
    rng = random.Random(f"{spec.seed}-conversations")
    w = _Writer(rng, vocab, cum)
    # About 15 conversations per date folder; a third of the folders are whole months.
    folders: list[str] = []
    seen: set[str] = set()
    while len(folders) < max(1, spec.conversations // 15):
        day = _random_day(rng)
        name = f"{day:%Y-%m}" if rng.random() < 0.33 else day.isoformat()
        if name not in seen:
            seen.add(name)
            folders.append(name)
    counters = dict.fromkeys(folders, 0)
    total = 0
    for _ in range(spec.conversations):
        folder = rng.choice(folders)
        counters[folder] += 1
        slug = "-".join(rng.choice(_DOMAIN_WORDS) for _ in range(rng.randint(2, 4)))
        conv = root / folder / f"{counters[folder]:03d}-{slug}"
        conv.mkdir(parents=True, exist_ok=True)
        files = rng.sample(
            ("conversation.md", "notes.md", "summary.md", "transcript.md"), rng.randint(1, 3)
        )
        for name in files:
            turns = [f"# {rng.choice(_TOPICS).capitalize()}"]
            for _ in range(rng.randint(3, 8)):
                who = rng.choice(("**User:**", "**Assistant:**"))
                body = w.paragraph(rng.randint(1, 4))
                if rng.random() < 0.25:
                    body += "\n\n" + w.log_block(_random_day(rng))
                if rng.random() < 0.04:
                    body += "\n" + w.cjk(rng.randint(1, 2))
                turns.append(f"{who} {body}")
            data = ("\n\n".join(turns) + "\n").encode("utf-8")
            (conv / name).write_bytes(data)
            total += len(data)
    return total


TROVE_TOML = """\
# Written by bench/gen_corpus.py. Paths are relative to this file.
[sources]
reports = "reports"
commands = "commands"
conversations = "conversations"

[index]
dir = "index"
"""


def read_manifest(out_dir: Path) -> dict[str, object] | None:
    try:
        return json.loads((Path(out_dir) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def generate(
    out_dir: str | Path,
    reports: int = 10000,
    commands: int = 200,
    conversations: int = 2000,
    report_kb: float = 4.0,
    seed: int = 1,
) -> dict[str, object]:
    """Write the corpus into ``out_dir`` (its three source folders are replaced)."""
    out = Path(out_dir)
    spec = CorpusSpec(reports, commands, conversations, float(report_kb), seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)  # an interrupted run leaves no manifest
    vocab = build_vocabulary(random.Random(f"{seed}-vocabulary"))
    cum = zipf_cum_weights(len(vocab))
    started = time.perf_counter()
    sizes = {}
    for name, write in (
        ("reports", write_reports),
        ("commands", write_commands),
        ("conversations", write_conversations),
    ):
        shutil.rmtree(out / name, ignore_errors=True)
        (out / name).mkdir()
        sizes[name] = write(out / name, spec, vocab, cum)
    (out / "trove.toml").write_text(TROVE_TOML, encoding="utf-8")
    manifest: dict[str, object] = {
        **asdict(spec),
        "bytes": sizes,
        "seconds": round(time.perf_counter() - started, 2),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--reports", type=int, default=10000)
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--report-kb", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name in ("reports", "commands", "conversations"):
        if getattr(args, name) < 0:
            parser.error(f"--{name} must be 0 or more")
    if args.report_kb <= 0:
        parser.error("--report-kb must be greater than 0")
    m = generate(
        args.out_dir, args.reports, args.commands, args.conversations, args.report_kb, args.seed
    )
    sizes = m["bytes"]
    assert isinstance(sizes, dict)
    print(
        f"{args.out_dir}: {args.reports} reports ({sizes['reports'] / 1e6:.1f} MB), "
        f"{args.commands} commands, {args.conversations} conversations "
        f"in {m['seconds']} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
