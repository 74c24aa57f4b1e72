from __future__ import annotations

from pathlib import Path

import pytest

from indexer.config import ConfigError, find_config, load_settings, settings_from_file


def test_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "conf" / "trove.toml"
    cfg.parent.mkdir()
    cfg.write_text('[sources]\nreports = "../r"\n[index]\ndir = "ix"\n')
    s = settings_from_file(cfg)
    assert s.sources.reports == (tmp_path / "r").resolve()
    assert s.index_dir == (tmp_path / "conf" / "ix").resolve()
    assert s.sources.commands is None


def test_index_dir_defaults_next_to_the_config(tmp_path: Path) -> None:
    cfg = tmp_path / "trove.toml"
    cfg.write_text("")
    assert settings_from_file(cfg).index_dir == (tmp_path / ".trove").resolve()


def test_lookup_order_flag_then_env_then_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "trove.toml").write_text(f'[reports]\nlink_base_url = "{name}"\n')
    monkeypatch.chdir(tmp_path / "c")
    assert load_settings().reports.link_base_url == "c"
    monkeypatch.setenv("TROVE_CONFIG", str(tmp_path / "b" / "trove.toml"))
    assert load_settings().reports.link_base_url == "b"
    assert load_settings(tmp_path / "a" / "trove.toml").reports.link_base_url == "a"


def test_no_config_anywhere_says_how_to_give_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="--config"):
        find_config()
    with pytest.raises(ConfigError, match="not found"):
        find_config(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[web]\ntimeout_s = 'soon'\n", "web.timeout_s must be a number"),
        ("[web]\ntimeout_s = 0\n", "web.timeout_s must be greater than 0"),
        ("[elog]\nrerank = 'magic'\n", "elog.rerank must be one of auto, semantic, lexical"),
        ("[server]\nport = 70000\n", "server.port must be a port number"),
        ("[server]\nport = 1.5\n", "server.port must be a whole number"),
        ("[sources]\nreport = 'x'\n", "unknown key sources.report"),
        ("[sourcez]\n", "unknown section [sourcez]"),
        ("[web]\nfallback_urls = 'http://x'\n", "web.fallback_urls must be a list of strings"),
        ("[sources]\nreports = ''\n", "sources.reports must be a non-empty path"),
        ("[web\n", "not valid TOML"),
        ("[index]\nmax_file_mb = inf\n", "index.max_file_mb must be a finite number"),
        ("[index]\nlock_timeout_s = nan\n", "index.lock_timeout_s must be a finite number"),
        ("[server]\nport = inf\n", "server.port must be a finite number"),
    ],
)
def test_a_bad_value_names_the_file_and_the_key(tmp_path: Path, text: str, named: str) -> None:
    cfg = tmp_path / "trove.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        settings_from_file(cfg)
    assert str(cfg) in str(info.value)
    assert named in str(info.value)
