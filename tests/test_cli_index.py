from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from query.cli import app

runner = CliRunner()


def config(tmp_path: Path) -> Path:
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        '[sources]\nreports = "reports"\ncommands = "commands"\n'
        'conversations = "conversations"\n[index]\ndir = "index"\n'
    )
    return cfg


def test_reindex_prints_a_summary_and_status_counts_documents(tmp_path, write) -> None:
    cfg = config(tmp_path)
    write("reports/a/r_20251101.md", "proxy")
    write("reports/a/bin.md", b"\x00\x01binary")
    write("commands/c.md", "---\ntitle: C\n---\nbody")
    result = runner.invoke(app, ["--config", str(cfg), "reindex", "--json"])
    assert result.exit_code == 0, result.output
    summaries = {s["collection"]: s for s in json.loads(result.stdout)}
    assert summaries["reports"]["added"] == 1
    assert summaries["reports"]["skipped"] == {"binary file": 1}
    assert summaries["commands"]["added"] == 1
    assert summaries["conversations"]["missing_root"] is True

    table = runner.invoke(app, ["--config", str(cfg), "reindex", "--collection", "reports"])
    assert table.exit_code == 0
    assert re.search(r"reports\s*│\s*0\s*│\s*0\s*│\s*0\s*│\s*1\s*│\s*1", table.stdout)
    assert "skipped 1 (binary file)" in table.stdout

    status = runner.invoke(app, ["--config", str(cfg), "status", "--json"])
    data = json.loads(status.stdout)
    docs = {c["collection"]: c["documents"] for c in data["collections"]}
    assert docs == {
        "reports": 1,
        "commands": 1,
        "conversations": 0,
        **({"elog": 0} if "elog" in docs else {}),
    }
    assert data["watcher"] is None
    human = runner.invoke(app, ["--config", str(cfg), "status"])
    assert "watcher: none has run on this index" in human.stdout


def test_bad_input_exits_2_with_a_message(tmp_path) -> None:
    cfg = config(tmp_path)
    r = runner.invoke(app, ["--config", str(cfg), "reindex", "--collection", "nope"])
    assert r.exit_code == 2 and "unknown collection 'nope'" in r.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[web]\ntimeout_s = -1\n")
    r = runner.invoke(app, ["--config", str(bad), "status"])
    assert r.exit_code == 2 and "web.timeout_s must be greater than 0" in r.stderr
    r = runner.invoke(app, ["--config", str(tmp_path / "missing.toml"), "status"])
    assert r.exit_code == 2 and "no config file at" in r.stderr and "trove init" in r.stderr


def test_a_foreign_index_folder_fails_with_exit_1(tmp_path, write) -> None:
    cfg = config(tmp_path)
    write("index/reports/mine.txt", "not yours")
    r = runner.invoke(app, ["--config", str(cfg), "reindex", "--collection", "reports"])
    assert r.exit_code == 1
    assert "is not a trove index" in r.stderr
    assert (tmp_path / "index/reports/mine.txt").exists()


def test_one_collection_failing_does_not_stop_the_others(tmp_path, write) -> None:
    cfg = config(tmp_path)
    write("index/reports/mine.txt", "not yours")
    write("commands/c.md", "---\ntitle: C\n---\nbody")
    r = runner.invoke(app, ["--config", str(cfg), "reindex", "--json"])
    assert r.exit_code == 1
    summaries = {s["collection"]: s for s in json.loads(r.stdout)}
    assert "is not a trove index" in summaries["reports"]["error"]
    assert summaries["commands"]["added"] == 1 and summaries["commands"]["error"] == ""
    table = runner.invoke(app, ["--config", str(cfg), "reindex"])
    assert table.exit_code == 1
    assert "reports (failed)" in table.stdout
    assert "trove: reports:" in table.stderr and "is not a trove index" in table.stderr


def test_a_collection_named_twice_is_reindexed_once(tmp_path, write) -> None:
    cfg = config(tmp_path)
    write("reports/a/r.md", "x")
    r = runner.invoke(
        app,
        [
            "--config",
            str(cfg),
            "reindex",
            "--json",
            "--collection",
            "reports",
            "--collection",
            "reports",
        ],
    )
    assert r.exit_code == 0
    assert [s["collection"] for s in json.loads(r.stdout)] == ["reports"]


def test_every_command_has_help_and_is_in_the_cli_docs() -> None:
    readme = (Path(__file__).parent.parent / "docs" / "CLI.md").read_text()
    import typer.core
    import typer.main

    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup), group
    names = []
    for name, cmd in group.commands.items():
        assert cmd.help, f"{name} has no help"
        if hasattr(cmd, "commands"):
            for sub, subcmd in cmd.commands.items():
                assert subcmd.help, f"{name} {sub} has no help"
                names.append(f"trove {name} {sub}")
        else:
            names.append(f"trove {name}")
    missing = [n for n in names if n not in readme]
    assert not missing, f"not in docs/CLI.md: {missing}"


def test_the_console_script_runs(tmp_path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "query.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0 and "reindex" in r.stdout


def test_reindex_json_says_what_changed_in_each_collection_and_how_long_it_took(
    tmp_path, write
) -> None:
    """Every key of a collection's summary, each with what the reconcile did: a report
    added, one updated, one deleted, one left, an empty one (a warning)."""
    cfg = config(tmp_path)
    for name in ("a", "b", "c"):
        write(f"reports/x/{name}_20251101.md", f"report {name}")
    assert runner.invoke(app, ["--config", str(cfg), "reindex"]).exit_code == 0
    write("reports/x/a_20251101.md", "report a, edited")
    (tmp_path / "reports/x/b_20251101.md").unlink()
    write("reports/x/d_20251101.md", "report d")
    write("reports/x/e_20251101.md", "")
    started = time.perf_counter()
    r = runner.invoke(app, ["--config", str(cfg), "reindex", "--collection", "reports", "--json"])
    took = time.perf_counter() - started
    assert r.exit_code == 0, r.output
    [summary] = json.loads(r.stdout)
    seconds = summary.pop("seconds")
    assert summary == {
        "collection": "reports",
        "added": 2,
        "updated": 1,
        "deleted": 1,
        "unchanged": 1,
        "skipped": {},
        "warnings": ["x/e_20251101.md: empty file"],
        "missing_root": False,
        "error": "",
    }
    assert isinstance(seconds, float) and 0 < seconds <= took
    assert seconds == round(seconds, 3)  # to the millisecond
