"""trove's one TOML config file, loaded into one typed settings object.

Lookup order: ``--config PATH``, then ``$TROVE_CONFIG``, then ``./trove.toml``.
Relative paths in the file are relative to the file itself.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

COLLECTIONS = ("reports", "commands", "conversations", "elog")


class ConfigError(Exception):
    """The config file is missing, unreadable or holds a bad value."""


@dataclass(frozen=True)
class SourcesSettings:
    reports: Path | None = None
    commands: Path | None = None
    conversations: Path | None = None
    elog: Path | None = None
    elog_config: Path | None = None


@dataclass(frozen=True)
class IndexSettings:
    dir: Path = Path(".trove")
    # Files above this size are indexed by their first max_file_mb megabytes.
    max_file_mb: float = 4.0
    # How long a second writer waits for the first before giving up.
    lock_timeout_s: float = 30.0


@dataclass(frozen=True)
class ReportsSettings:
    link_base_url: str = ""


@dataclass(frozen=True)
class CommandsSettings:
    search_timeout_ms: int = 5000


@dataclass(frozen=True)
class ElogSettings:
    link_base_url: str = ""
    rerank: str = "auto"


@dataclass(frozen=True)
class WebSettings:
    searxng_url: str = "http://127.0.0.1:8080"
    fallback_urls: tuple[str, ...] = ()
    timeout_s: float = 30.0
    cache_ttl_s: float = 300.0
    min_interval_s: float = 0.0


@dataclass(frozen=True)
class DaemonSettings:
    # The watcher applies a batch after this much quiet...
    quiet_ms: int = 150
    # ...or after this long since the batch's first event, whichever comes first.
    max_delay_ms: int = 1000
    # A full reconcile pass that catches anything the watcher missed.
    reconcile_interval_s: float = 600.0
    # How a source is watched: "events" (inotify), "poll", or "auto": events, except on
    # network and FUSE filesystems (where other machines' changes raise no event).
    watch: str = "auto"
    # A polled source: folders are checked every poll_interval_s, and every file once per
    # sweep_s (edits in place that change no folder are seen by the sweep).
    poll_interval_s: float = 2.0
    sweep_s: float = 30.0


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str = ""


@dataclass(frozen=True)
class Settings:
    config_path: Path | None = None
    sources: SourcesSettings = field(default_factory=SourcesSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    reports: ReportsSettings = field(default_factory=ReportsSettings)
    commands: CommandsSettings = field(default_factory=CommandsSettings)
    elog: ElogSettings = field(default_factory=ElogSettings)
    web: WebSettings = field(default_factory=WebSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    server: ServerSettings = field(default_factory=ServerSettings)

    def source_root(self, collection: str) -> Path | None:
        return getattr(self.sources, collection)

    @property
    def index_dir(self) -> Path:
        return self.index.dir


_SECTIONS: dict[str, type] = {
    "sources": SourcesSettings,
    "index": IndexSettings,
    "reports": ReportsSettings,
    "commands": CommandsSettings,
    "elog": ElogSettings,
    "web": WebSettings,
    "daemon": DaemonSettings,
    "server": ServerSettings,
}

# Values that must be one of a few words.
_CHOICES = {
    ("elog", "rerank"): ("auto", "semantic", "lexical"),
    ("daemon", "watch"): ("auto", "events", "poll"),
}
# Numbers that must be > 0 (the rest must be >= 0).
_POSITIVE = {
    ("index", "max_file_mb"),
    ("web", "timeout_s"),
    ("daemon", "quiet_ms"),
    ("daemon", "max_delay_ms"),
    ("daemon", "reconcile_interval_s"),
    ("daemon", "poll_interval_s"),
    ("daemon", "sweep_s"),
    ("commands", "search_timeout_ms"),
    ("server", "port"),
}


def find_config(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The config file to use, by the documented lookup order."""
    if explicit:
        path = Path(explicit)
        origin = "--config"
    elif os.environ.get("TROVE_CONFIG"):
        path = Path(os.environ["TROVE_CONFIG"])
        origin = "$TROVE_CONFIG"
    else:
        path = Path("trove.toml")
        if not path.is_file():
            raise ConfigError(
                "no config file: pass --config PATH, set $TROVE_CONFIG, or create ./trove.toml "
                "(see README.md, 'Configuration')"
            )
        origin = "./trove.toml"
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found (from {origin})")
    return path.resolve()


def load_settings(explicit: str | os.PathLike[str] | None = None) -> Settings:
    """Find, read and validate the config file."""
    return settings_from_file(find_config(explicit))


def settings_from_file(path: Path) -> Settings:
    path = path.resolve()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: config file is not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return settings_from_dict(raw, base=path.parent, origin=path)


def settings_from_dict(raw: dict[str, Any], base: Path, origin: Path | None = None) -> Settings:
    """Build settings from parsed TOML; relative paths are resolved against ``base``."""
    where = str(origin) if origin else "config"
    sections: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in _SECTIONS:
            raise ConfigError(
                f"{where}: unknown section [{name}]; known: {', '.join(sorted(_SECTIONS))}"
            )
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{name}] must be a table")
        sections[name] = _build_section(name, _SECTIONS[name], value, base, where)
    index = sections.get("index", IndexSettings())
    if not index.dir.is_absolute():
        sections["index"] = replace(index, dir=(base / index.dir).resolve())
    return Settings(config_path=origin, **sections)


def _build_section(section: str, cls: type, values: dict[str, Any], base: Path, where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(
                f"{where}: unknown key {section}.{key}; known: {', '.join(sorted(known))}"
            )
        kwargs[key] = _convert(section, key, known[key].type, value, base, where)
    return cls(**kwargs)


def _convert(section: str, key: str, type_name: Any, value: Any, base: Path, where: str) -> Any:
    name = f"{section}.{key}"
    t = str(type_name)

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{where}: {name} must be {expected}, got {value!r}")

    if "Path" in t:
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise bad("a non-empty path string")
        path = Path(os.path.expanduser(value))
        return path if path.is_absolute() else (base / path).resolve()
    if t.startswith("tuple"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        return tuple(value)
    if t in ("float", "int"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        if not math.isfinite(value):
            raise bad("a finite number")
        if t == "int" and not float(value).is_integer():
            raise bad("a whole number")
        number = int(value) if t == "int" else float(value)
        if (section, key) in _POSITIVE and number <= 0:
            raise bad("greater than 0")
        if number < 0:
            raise bad("0 or more")
        if name == "server.port" and number > 65535:
            raise bad("a port number (1-65535)")
        return number
    if t == "str":
        if not isinstance(value, str):
            raise bad("a string")
        choices = _CHOICES.get((section, key))
        if choices and value not in choices:
            raise bad("one of " + ", ".join(choices))
        return value
    raise AssertionError(f"unhandled setting type {t} for {name}")  # pragma: no cover
