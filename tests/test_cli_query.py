"""The list/get companions on the command line: thin wrappers around the Python API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from query.cli import app

runner = CliRunner()


@pytest.fixture
def config(tmp_path: Path, write) -> str:
    write("reports/speech/sdk_20251101.md", "# First\n\ndecode timeout\n")
    write("reports/speech/sdk_20251120_v2.md", "# Second\n\ndecode timeout again\n")
    write("reports/speech/notes.md", "undated")
    write(
        "commands/speech.md",
        "---\ntitle: Speech logs\ndescription: Reads speech SDK logs.\ntags: [asr, sdk]\n---\n"
        "# Speech\n\nSteps.\n",
    )
    write("commands/helpers.md", "---\ntitle: Helpers\nis_dependency: true\n---\nShared parsers.\n")
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        '[sources]\nreports = "reports"\ncommands = "commands"\n[index]\ndir = "index"\n'
    )
    return str(cfg)


def test_list_reports_shows_a_commands_reports_newest_first(config) -> None:
    r = runner.invoke(app, ["--config", config, "list", "reports", "speech", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [x["report_name"] for x in data["reports"]] == [
        "sdk_20251120_v2.md",
        "sdk_20251101.md",
        "notes.md",
    ]
    table = runner.invoke(app, ["--config", config, "list", "reports", "speech", "-n", "1"])
    assert table.exit_code == 0
    assert "speech: 1 of 3 reports" in table.stdout and "sdk_20251120_v2.md" in table.stdout


def test_list_commands_hides_dependencies_unless_asked(config) -> None:
    r = runner.invoke(app, ["--config", config, "list", "commands", "--json"])
    assert [c["name"] for c in json.loads(r.stdout)["commands"]] == ["speech"]
    r = runner.invoke(app, ["--config", config, "list", "commands", "--include-dependencies"])
    assert r.exit_code == 0 and "helpers (dependency)" in r.stdout


def test_get_report_prints_the_report_itself(config) -> None:
    r = runner.invoke(app, ["--config", config, "get", "report", "speech", "sdk_20251101.md"])
    assert r.exit_code == 0
    assert r.stdout == "# First\n\ndecode timeout\n"
    r = runner.invoke(
        app, ["--config", config, "get", "report", "speech", "sdk_20251101.md", "--json"]
    )
    assert json.loads(r.stdout)["date"] == "2025-11-01T00:00:00.000Z"


def test_get_command_prints_its_header_and_body(config) -> None:
    r = runner.invoke(app, ["--config", config, "get", "command", "speech"])
    assert r.exit_code == 0
    assert r.stdout.startswith("Speech logs  (")
    assert "Reads speech SDK logs." in r.stdout and "tags: asr, sdk" in r.stdout
    assert r.stdout.endswith("# Speech\n\nSteps.\n")


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["list", "reports", "nope"], 1, "NOT_FOUND"),
        (["list", "reports", "../etc"], 2, "INVALID_COMMAND_FILTER"),
        (["list", "reports", "speech", "-n", "0"], 2, "INVALID_ARGUMENT"),
        (["get", "report", "speech", "missing.md"], 1, "NOT_FOUND"),
        (["get", "report", "speech", "../../trove.toml"], 2, "INVALID_COMMAND_FILTER"),
        (["get", "command", "nope"], 1, "NOT_FOUND"),
    ],
)
def test_bad_names_get_their_codes_and_exit_codes(config, argv, code, words) -> None:
    r = runner.invoke(app, ["--config", config, *argv])
    assert r.exit_code == code, r.output
    assert words in r.stderr


def test_search_without_a_collection_searches_every_one(config) -> None:
    r = runner.invoke(app, ["--config", config, "search", "decode timeout", "--json"])
    assert r.exit_code == 0, r.output
    answer = json.loads(r.stdout)
    assert {h["id"] for h in answer["hits"]} >= {
        "speech/sdk_20251101.md",
        "speech/sdk_20251120_v2.md",
    }
    # conversations and elog are not configured: the note says so, the rest answers.
    assert set(answer["by_collection"]) == {"reports", "commands"}
    assert "conversations" in answer["note"] and "elog" in answer["note"]
    same = runner.invoke(app, ["--config", config, "search", "all", "decode timeout", "--json"])
    assert json.loads(same.stdout)["hits"] == answer["hits"]
    table = runner.invoke(app, ["--config", config, "search", "speech", "--collection", "commands"])
    assert table.exit_code == 0 and "speech" in table.stdout and "commands" in table.stdout
    bad = runner.invoke(app, ["--config", config, "search", "x", "--since", "yesterday"])
    assert bad.exit_code == 2 and "INVALID_DATE_RANGE" in bad.stderr
    # A collection's own subcommand still answers as before.
    own = runner.invoke(app, ["--config", config, "search", "reports", "decode", "--json"])
    assert own.exit_code == 0 and "results" in json.loads(own.stdout)


def test_a_search_says_in_one_line_when_no_watcher_keeps_the_index_fresh_and_marks_stale_hits(
    config, tmp_path: Path
) -> None:
    r = runner.invoke(app, ["--config", config, "search", "reports", "decode timeout"])
    assert r.exit_code == 0, r.output
    assert "note:" not in r.stdout  # stdout keeps its shape: the note is on stderr
    notes = [line for line in r.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and "no watcher keeps the index fresh" in notes[0]
    # A report edited after the index read it is marked, and the note counts it.
    (tmp_path / "reports/speech/sdk_20251101.md").write_text("# First\n\ndecode timeout, later\n")
    r = runner.invoke(app, ["--config", config, "search", "reports", "decode timeout", "--json"])
    data = json.loads(r.stdout)
    assert data["freshness"]["watcher"] is None and data["freshness"]["as_of"]
    stale = {h["report_name"]: h["stale"] for h in data["results"]}
    assert stale == {"sdk_20251101.md": True, "sdk_20251120_v2.md": False}
    r = runner.invoke(app, ["--config", config, "search", "reports", "decode timeout"])
    assert "1 hit changed on disk after the index read it (stale)" in r.stderr
    assert "speech/sdk_20251101.md (stale)" in r.stdout


def test_get_takes_a_hits_id_and_prints_a_part_with_where_it_goes_on(
    config, tmp_path: Path
) -> None:
    whole = runner.invoke(app, ["--config", config, "get", "report", "speech/sdk_20251101.md"])
    assert whole.exit_code == 0 and whole.stdout == "# First\n\ndecode timeout\n"
    part = runner.invoke(
        app,
        [
            "--config",
            config,
            "get",
            "report",
            "speech/sdk_20251101",
            "--offset",
            "2",
            "--limit",
            "1",
        ],
    )
    assert part.exit_code == 0 and part.stdout == "\n"
    assert "lines 2-2 of 3; more: --offset 3" in part.stderr
    conv = tmp_path / "conversations/2025-11-10/001-talk/notes.md"
    conv.parent.mkdir(parents=True)
    conv.write_text("one\ntwo\nthree\n")
    cfg = Path(config)
    cfg.write_text(cfg.read_text().replace("[index]", 'conversations = "conversations"\n[index]'))
    line = runner.invoke(
        app, ["--config", config, "get", "conversation", "2025-11-10/001-talk/notes.md:2"]
    )
    assert line.exit_code == 0 and line.stdout == "two\nthree\n", line.output
    bad = runner.invoke(app, ["--config", config, "get", "conversation", "../notes.md"])
    assert bad.exit_code == 2 and "INVALID_ARGUMENT" in bad.stderr
    found = runner.invoke(
        app, ["--config", config, "search", "reports", "decode", "-n", "1", "--json"]
    )
    data = json.loads(found.stdout)
    assert data["next_offset"] == 1 and data["results"][0]["id"] == "speech/sdk_20251120_v2.md"
    page = runner.invoke(app, ["--config", config, "search", "reports", "decode", "-n", "1"])
    assert "more: --offset 1" in page.stderr
