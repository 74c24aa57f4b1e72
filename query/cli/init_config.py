"""`trove init`: a trove.toml for one's own folders, and what the other commands say when
there is none.

Paths inside the config file's folder are written relative to it (the file can move with
its folders); others are written absolute. A source folder that does not exist yet is
written all the same, with a warning: trove treats it as an empty collection and the
daemon picks it up when it appears. A path that exists but is not a folder is refused.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from indexer.config import COLLECTIONS


class InitError(Exception):
    """A folder given to `trove init` cannot be used (it is a file)."""


@dataclass
class InitFile:
    """What `trove init` writes, and what it has to say about it."""

    text: str
    warnings: list[str] = field(default_factory=list)


def config_path(explicit: str | None) -> Path:
    """Where to write: --config, then $TROVE_CONFIG, then ./trove.toml (the order in which
    every other command looks the file up)."""
    return Path(explicit or os.environ.get("TROVE_CONFIG") or "trove.toml").absolute()


def missing_config(explicit: str | None) -> str | None:
    """What to say when the config file the lookup picks is not there, naming `trove init`
    (which writes it there) and --config; None when something is there (whatever is
    wrong with it, indexer.config says)."""
    if config_path(explicit).exists():
        return None
    if explicit:
        return (
            f"no config file at {explicit} (from --config); write one there with "
            f"`trove init --config {shlex.quote(explicit)}`"
        )
    env = os.environ.get("TROVE_CONFIG")
    if env:
        return (
            f"no config file at {env} (from $TROVE_CONFIG); write one there with "
            "`trove init`, or pass --config PATH"
        )
    return (
        "no config file at ./trove.toml (nor $TROVE_CONFIG); write one with `trove init`, "
        "or pass --config PATH"
    )


def plan(target: Path, sources: dict[str, str | None], index: str | None) -> InitFile:
    """The text of the config file at ``target`` for these folders (as given on the
    command line, relative to the working directory)."""
    base = target.parent
    warnings: list[str] = []
    lines = [
        "# trove's config, written by `trove init`. Paths are relative to this file.",
        "# Every key is documented in README.md, 'Configuration'.",
        "[sources]",
    ]
    for name in COLLECTIONS:
        given = sources.get(name)
        if given is None:
            continue
        path = Path(given).expanduser().absolute()
        if path.exists() and not path.is_dir():
            raise InitError(f"--{name} {given}: not a folder")
        if not path.exists():
            warnings.append(
                f"--{name} {given}: no such folder yet; the {name} collection stays empty "
                "until it exists"
            )
        lines.append(f"{name} = {_toml(_relative(path, base))}")
    if len(lines) == 3:
        warnings.append(
            "no source folder given: every collection is empty "
            "(pass --reports, --commands, --conversations or --elog)"
        )
    index_dir = Path(index).expanduser().absolute() if index else base / ".trove"
    if index_dir.exists() and not index_dir.is_dir():
        raise InitError(f"--index {index}: not a folder")
    lines += ["", "[index]", f"dir = {_toml(_relative(index_dir, base))}", ""]
    return InitFile("\n".join(lines), warnings)


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix() or "."
    except ValueError:
        return str(path)


def _toml(value: str) -> str:
    # A JSON string is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=False)
