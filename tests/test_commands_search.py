"""search_commands, get_command, list_commands over a tiny corpus of commands and reports."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.config import Settings
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.cli import app
from query.commands import (
    BANDS,
    EVIDENCE_BONUS,
    get_command,
    list_commands,
    name_words,
    query_keywords,
    search_commands,
)
from query.context import QueryContext
from query.errors import TroveError

COMMANDS = {
    "analyze_zoom_speech_sdk_log": """---
title: Analyze Zoom Speech SDK Log
description: Analyzes Zoom Speech SDK log files for decode timeouts and websocket reconnects.
tags: [speech-sdk, asr, websocket]
is_dependency: false
---
# Analyze Zoom Speech SDK Log

Read the client log and list every decode timeout.
""",
    "proxy-slow-meeting-analysis-command": """---
title: Proxy Slow Meeting Analysis
description: Analyzes proxy logs for slow meeting join issues.
tags: [proxy, pac, meeting]
---
Check the PAC file and the proxy authentication.
""",
    "network_helper": """---
title: Kerberos ticket triage
description: Finds expired Kerberos tickets and SPN mismatches.
tags: [auth]
owner_team: identity
keywords: [negotiate, spnego]
---
Collect klist output.
""",
    "summarize_weekly_planning": """---
title: Summarize Weekly Planning
description: Turns planning notes into a one-page plan.
tags: [planning]
---
Use on Monday mornings.
""",
    "log_common_parsers": """---
title: Common Log Parsers
description: Shared helpers for speech SDK log analysis; not run on its own.
is_dependency: true
---
Helpers.
""",
    "broken_frontmatter": """---
title: DNS check
tags: [dns, resolver
---
Checks DNS resolution.
""",
}


def recent(days_ago: int) -> str:
    return (date.today() - timedelta(days=days_ago)).strftime("%Y%m%d")


@pytest.fixture
def corpus(write: Callable[[str, str | bytes], Path]) -> Callable[..., None]:
    """Writes the commands (and optional reports) under tmp_path."""

    def make(commands: dict[str, str] | None = None, reports: dict[str, str] | None = None) -> None:
        for name, text in (COMMANDS if commands is None else commands).items():
            write(f"commands/{name}.md", text)
        for rel, text in (reports or {}).items():
            write(f"reports/{rel}", text)

    return make


@pytest.fixture
def ctx_for() -> Iterator[Callable[..., QueryContext]]:
    """A query context; the reports index built first (as reindex or the watcher would),
    since search_commands never builds it."""
    made: list[QueryContext] = []

    def make(settings: Settings, index_reports: bool = True) -> QueryContext:
        reports = settings.source_root("reports")
        if index_reports and reports is not None and reports.is_dir():
            Syncer(settings, get_source("reports")).reconcile()
        made.append(QueryContext.from_settings(settings))
        return made[-1]

    yield make
    for ctx in made:
        ctx.close()


@pytest.fixture
def ctx(corpus, make_settings, ctx_for) -> QueryContext:
    corpus()
    return ctx_for(make_settings())


def names(answer) -> list[str]:
    return [r.name for r in answer.results]


def by_name(answer) -> dict:
    return {r.name: r for r in answer.results}


# --------------------------------------------------------------------------- words


def test_names_split_on_underscores_dashes_case_and_digits() -> None:
    assert name_words("analyze_zoom_speech_sdk_log") == ["analyze", "zoom", "speech", "sdk", "log"]
    assert name_words("proxy-slow-meeting") == ["proxy", "slow", "meeting"]
    assert name_words("parseHTTPLog2x") == ["parse", "http", "log", "2", "x"]
    assert name_words("OAuth2Refresh") == ["oauth", "2", "refresh"]


def test_query_keywords_are_lower_cased_without_stop_words() -> None:
    assert query_keywords("  Why is the Meeting join SLOW  ") == ["meeting", "join", "slow"]
    assert query_keywords("the of") == ["the", "of"]  # nothing but stop words: keep them


def test_a_cjk_run_is_one_keyword_apart_from_the_letters_around_it() -> None:
    assert query_keywords("SDK日志分析 proxy代理超时") == ["sdk", "日志分析", "proxy", "代理超时"]
    assert name_words("Zoom_SDK日志分析报告") == ["zoom", "sdk", "日志分析报告"]


# --------------------------------------------------------------------------- tiers


def test_the_spec_example_finds_the_speech_sdk_command_by_its_file_name(ctx) -> None:
    answer = search_commands(ctx, "speech SDK log analysis")
    top = answer.results[0]
    assert top.name == "analyze_zoom_speech_sdk_log"
    assert top.tier == "tier1"
    assert top.score >= 0.9
    reason = top.match_reason
    assert reason.startswith("File name contains")
    for word in ("'speech'", "'sdk'", "'log'", "'analyze' (for 'analysis')"):
        assert word in reason
    assert top.description.startswith("Analyzes Zoom Speech SDK log files")
    assert answer.total_found >= 1 and answer.search_time_ms >= 0


def test_the_second_spec_example_finds_the_proxy_command(ctx) -> None:
    top = search_commands(ctx, "meeting join slow proxy").results[0]
    assert (top.name, top.tier) == ("proxy-slow-meeting-analysis-command", "tier1")
    assert "'proxy', 'slow' and 'meeting'" in top.match_reason


def test_file_name_matches_respect_word_boundaries(corpus, make_settings, ctx_for) -> None:
    corpus({"catalog_builder": "Builds a catalog.", "log_rotate": "Rotates files."})
    answer = search_commands(ctx_for(make_settings()), "log")
    assert by_name(answer)["log_rotate"].tier == "tier1"
    assert (
        "catalog_builder" not in by_name(answer)
        or by_name(answer)["catalog_builder"].tier != "tier1"
    )


def test_a_file_name_match_early_in_the_name_scores_higher(corpus, make_settings, ctx_for) -> None:
    corpus({"proxy_check_tool": "x", "check_tool_proxy": "x"})
    answer = search_commands(ctx_for(make_settings()), "proxy")
    assert names(answer)[:2] == ["proxy_check_tool", "check_tool_proxy"]
    assert answer.results[0].score > answer.results[1].score


def test_content_search_is_fuzzy_and_says_what_matched_where(ctx) -> None:
    answer = search_commands(ctx, "websocket reconect")
    hit = by_name(answer)["analyze_zoom_speech_sdk_log"]
    assert hit.tier == "tier2"
    assert "'websocket' in the tags" in hit.match_reason
    assert "'reconnects' (for 'reconect') in the description" in hit.match_reason


def test_content_search_uses_every_frontmatter_value(ctx) -> None:
    hit = by_name(search_commands(ctx, "spnego"))["network_helper"]
    assert hit.tier == "tier2"
    assert "'spnego' in the frontmatter" in hit.match_reason
    assert by_name(search_commands(ctx, "kerberos tickets"))["network_helper"].tier == "tier2"


CJK_COMMANDS = {
    "summarize_weekly_planning": """---
title: Summarize Weekly Planning
description: Turns planning notes into a one-page plan.
---
If notes contain Chinese (e.g. 代理超时, 日志分
析), keep the original.
""",
    "proxy_helper": "---\ntitle: 代理配置\n---\nChecks 超时 settings.\n",
}


def test_content_search_finds_a_cjk_phrase_in_the_text(corpus, make_settings, ctx_for) -> None:
    corpus(CJK_COMMANDS)
    ctx = ctx_for(make_settings())
    hit = by_name(search_commands(ctx, "代理超时"))["summarize_weekly_planning"]
    assert (hit.tier, hit.match_reason) == ("tier2", "Matches '代理超时' in the text")
    wrapped = by_name(search_commands(ctx, "日志分析"))["summarize_weekly_planning"]
    assert (wrapped.tier, wrapped.match_reason) == ("tier2", "Matches '日志分析' in the text")
    # One of its character pairs in a field is too little of the phrase to count.
    assert "proxy_helper" not in names(search_commands(ctx, "代理超时"))


def test_a_cjk_phrase_partly_in_a_field_matches_by_its_parts(
    corpus, make_settings, ctx_for
) -> None:
    corpus(CJK_COMMANDS)
    hit = by_name(search_commands(ctx_for(make_settings()), "代理配置问题"))["proxy_helper"]
    assert hit.tier == "tier2"
    assert hit.match_reason == "Matches '代理配置' (for '代理配置问题') in the title"


def test_reports_reveal_commands_their_own_text_does_not(corpus, make_settings, ctx_for) -> None:
    corpus(
        reports={
            f"summarize_weekly_planning/plan_{recent(3)}.md": "The frobnicator outage was discussed.",
            f"summarize_weekly_planning/plan_{recent(40)}.md": "Frobnicator again.",
            "summarize_weekly_planning/plan_undated.md": "nothing here",
        }
    )
    hit = by_name(search_commands(ctx_for(make_settings()), "frobnicator"))[
        "summarize_weekly_planning"
    ]
    assert hit.tier == "tier3"
    newest = (date.today() - timedelta(days=3)).isoformat()
    assert hit.match_reason == f"2 of its reports mention every query word (newest {newest})"


def test_recent_reports_count_for_more(corpus, make_settings, ctx_for) -> None:
    corpus(
        {"alpha_tool": "x", "beta_tool": "x"},
        reports={
            f"alpha_tool/a_{recent(900)}.md": "frobnicator",
            f"beta_tool/b_{recent(2)}.md": "frobnicator",
        },
    )
    answer = search_commands(ctx_for(make_settings()), "frobnicator")
    assert names(answer) == ["beta_tool", "alpha_tool"]
    assert {r.tier for r in answer.results} == {"tier3"}


def test_reports_indexed_later_add_their_evidence(corpus, make_settings, ctx_for, write) -> None:
    corpus(reports={f"alpha_tool/a_{recent(5)}.md": "frobnicator"})
    corpus({"alpha_tool": "x", "beta_tool": "x"})
    ctx = ctx_for(make_settings())
    assert names(search_commands(ctx, "frobnicator")) == ["alpha_tool"]
    write(f"reports/beta_tool/b_{recent(1)}.md", "frobnicator")
    write(f"reports/alpha_tool/a_{recent(2)}.md", "frobnicator")
    Syncer(ctx.settings, get_source("reports")).reconcile()  # a second segment
    hits = by_name(search_commands(ctx, "frobnicator"))
    assert hits["alpha_tool"].match_reason.startswith("2 of its reports")
    assert hits["beta_tool"].match_reason.startswith("1 of its reports")


def test_reports_of_unknown_or_hidden_commands_are_ignored(corpus, make_settings, ctx_for) -> None:
    corpus(
        reports={
            f"gone_command/r_{recent(1)}.md": "frobnicator",
            f"log_common_parsers/r_{recent(1)}.md": "frobnicator",
        }
    )
    answer = search_commands(ctx_for(make_settings()), "frobnicator")
    assert answer.results == [] and answer.total_found == 0


def test_a_command_found_by_several_tiers_is_listed_once_under_the_highest(
    corpus, make_settings, ctx_for
) -> None:
    corpus(reports={f"proxy-slow-meeting-analysis-command/r_{recent(1)}.md": "proxy pac"})
    answer = search_commands(ctx_for(make_settings()), "proxy")
    assert names(answer).count("proxy-slow-meeting-analysis-command") == 1
    hit = by_name(answer)["proxy-slow-meeting-analysis-command"]
    assert hit.tier == "tier1"
    assert "File name contains 'proxy'" in hit.match_reason
    assert "in the tags" in hit.match_reason and "of its reports" in hit.match_reason


def test_bands_let_a_strong_match_of_a_higher_tier_outrank_any_lower_tier() -> None:
    # tier 1 covering every keyword scores at least 0.45 + 0.55 * 0.7; tier 2 tops at 0.80
    # (plus the evidence bonus of its other tiers); tier 2 at 70 % scores
    # 0.25 + 0.55 * 0.7, above tier 3's best plus a bonus.
    t1_low, t1_high = BANDS["tier1"]
    t2_low, t2_high = BANDS["tier2"]
    t3_low, t3_high = BANDS["tier3"]
    assert t1_low + (t1_high - t1_low) * 0.7 > t2_high + EVIDENCE_BONUS
    assert t2_low + (t2_high - t2_low) * 0.7 > t3_high + EVIDENCE_BONUS
    assert 0 <= t3_low and t1_high <= 1


def test_report_evidence_orders_commands_whose_content_matches_equally(
    corpus, make_settings, ctx_for
) -> None:
    corpus(
        {
            "alpha_check": "---\ntags: [dns]\n---\nx\n",
            "beta_check": "---\ntags: [dns]\n---\nx\n",
            "gamma_check": "---\ntags: [dns]\n---\nx\n",
            "dns_resolver_audit": "Resolvers.",
        },
        reports={
            **{f"beta_check/b{i}_{recent(i + 1)}.md": "dns timeout" for i in range(4)},
            f"alpha_check/a_{recent(1)}.md": "dns timeout",
        },
    )
    answer = search_commands(ctx_for(make_settings()), "dns")
    hits = by_name(answer)
    assert names(answer) == ["dns_resolver_audit", "beta_check", "alpha_check", "gamma_check"]
    assert {hits[n].tier for n in ("alpha_check", "beta_check", "gamma_check")} == {"tier2"}
    assert hits["gamma_check"].score == pytest.approx(BANDS["tier2"][1])
    assert hits["beta_check"].score > hits["alpha_check"].score > hits["gamma_check"].score
    assert hits["beta_check"].score < BANDS["tier2"][1] + EVIDENCE_BONUS
    assert hits["dns_resolver_audit"].score > hits["beta_check"].score


def test_a_reports_index_never_built_is_no_evidence_and_is_not_built(
    corpus, make_settings, ctx_for, tmp_path: Path
) -> None:
    corpus(reports={f"summarize_weekly_planning/r_{recent(1)}.md": "frobnicator"})
    settings = make_settings()
    answer = search_commands(ctx_for(settings, index_reports=False), "frobnicator")
    assert answer.results == [] and answer.total_found == 0
    assert not (tmp_path / "index" / "reports").exists()
    hit = search_commands(ctx_for(settings), "frobnicator").results[0]
    assert (hit.name, hit.tier) == ("summarize_weekly_planning", "tier3")


def test_a_full_file_name_match_outranks_a_perfect_content_match(
    corpus, make_settings, ctx_for
) -> None:
    corpus(
        {
            "proxy_pac_review": "Unrelated words only.",
            "helper_one": "---\ntitle: Proxy PAC\ndescription: proxy pac\ntags: [proxy, pac]\n---\n",
            "summarize_weekly_planning": "Planning.",
        },
        reports={f"summarize_weekly_planning/r_{recent(1)}.md": "proxy pac " * 5},
    )
    answer = search_commands(ctx_for(make_settings()), "proxy pac")
    hits = by_name(answer)
    assert names(answer)[0] == "proxy_pac_review" and hits["proxy_pac_review"].tier == "tier1"
    assert hits["helper_one"].tier == "tier2" and hits["helper_one"].score == pytest.approx(0.8)
    assert hits["proxy_pac_review"].score > hits["helper_one"].score
    assert hits["summarize_weekly_planning"].tier == "tier3"
    assert hits["helper_one"].score > hits["summarize_weekly_planning"].score
    assert all(0 <= r.score <= 1 for r in answer.results)
    assert [r.score for r in answer.results] == sorted(
        (r.score for r in answer.results), reverse=True
    )


# --------------------------------------------------------------------------- filtering


def test_dependency_commands_are_hidden_from_search_and_listing(ctx) -> None:
    assert "log_common_parsers" not in names(search_commands(ctx, "common log parsers"))
    listed = [c.name for c in list_commands(ctx).commands]
    assert "log_common_parsers" not in listed
    assert listed == sorted(listed) and "network_helper" in listed
    everything = list_commands(ctx, include_dependencies=True).commands
    assert {c.name: c.is_dependency for c in everything}["log_common_parsers"] is True


def test_a_command_whose_file_is_gone_is_hidden_before_the_index_catches_up(
    ctx, tmp_path: Path
) -> None:
    assert "network_helper" in names(search_commands(ctx, "kerberos"))
    (tmp_path / "commands" / "network_helper.md").unlink()  # no reindex
    assert "network_helper" not in names(search_commands(ctx, "kerberos"))
    assert "network_helper" not in [c.name for c in list_commands(ctx).commands]


def test_max_results_limits_the_results_not_total_found(ctx) -> None:
    answer = search_commands(ctx, "analyzes log", max_results=1)
    assert len(answer.results) == 1 and answer.total_found >= 2


def test_new_commands_are_found_once_indexed(ctx, write, make_settings) -> None:
    assert search_commands(ctx, "zebra").results == []
    write("commands/zebra_crossing.md", "Stripes.")
    Syncer(ctx.settings, get_source("commands")).reconcile()
    assert names(search_commands(ctx, "zebra")) == ["zebra_crossing"]


def test_a_missing_index_is_built_on_first_use(ctx, tmp_path: Path) -> None:
    assert not (tmp_path / "index" / "commands").exists()
    assert search_commands(ctx, "kerberos").results
    assert (tmp_path / "index" / "commands").is_dir()


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_is_invalid_query(ctx, query: str) -> None:
    with pytest.raises(TroveError) as err:
        search_commands(ctx, query)
    assert err.value.code == "INVALID_QUERY"


@pytest.mark.parametrize("n", [0, 101, -1])
def test_max_results_out_of_range_is_invalid_argument(ctx, n: int) -> None:
    with pytest.raises(TroveError) as err:
        search_commands(ctx, "proxy", max_results=n)
    assert err.value.code == "INVALID_ARGUMENT" and "between 1 and 100" in err.value.message


def test_a_search_past_its_deadline_is_search_timeout(corpus, make_settings, ctx_for) -> None:
    corpus()
    settings = make_settings()
    settings = dataclasses.replace(
        settings, commands=dataclasses.replace(settings.commands, search_timeout_ms=0)
    )
    with pytest.raises(TroveError) as err:
        search_commands(ctx_for(settings), "proxy")
    assert err.value.code == "SEARCH_TIMEOUT" and "search_timeout_ms" in err.value.message


def test_the_deadline_comes_from_the_config_file(corpus, make_settings, ctx_for) -> None:
    corpus()
    assert make_settings(commands={"search_timeout_ms": 1234}).commands.search_timeout_ms == 1234
    assert make_settings().commands.search_timeout_ms == 5000


def test_a_missing_commands_folder_is_directory_not_found(make_settings, ctx_for) -> None:
    ctx = ctx_for(make_settings())
    for call in (
        lambda: search_commands(ctx, "proxy"),
        lambda: get_command(ctx, "proxy"),
        lambda: list_commands(ctx),
    ):
        with pytest.raises(TroveError) as err:
            call()
        assert err.value.code == "DIRECTORY_NOT_FOUND"


# --------------------------------------------------------------------------- get_command


def test_get_command_returns_the_command_in_full(ctx, tmp_path: Path) -> None:
    cmd = get_command(ctx, "network_helper")
    assert cmd.title == "Kerberos ticket triage"
    assert cmd.description == "Finds expired Kerberos tickets and SPN mismatches."
    assert cmd.tags == ["auth"]
    assert cmd.frontmatter["keywords"] == ["negotiate", "spnego"]
    assert cmd.content.strip() == "Collect klist output."
    assert cmd.path == str(tmp_path / "commands" / "network_helper.md")
    assert get_command(ctx, "network_helper.md").name == "network_helper"


def test_get_command_reads_a_dependency_and_malformed_frontmatter(ctx) -> None:
    assert get_command(ctx, "log_common_parsers").is_dependency is True
    broken = get_command(ctx, "broken_frontmatter")
    assert broken.frontmatter == {} and "Checks DNS resolution." in broken.content
    assert broken.description == "Checks DNS resolution."


def test_malformed_frontmatter_is_not_shown_as_the_description(ctx) -> None:
    hit = by_name(search_commands(ctx, "dns resolution"))["broken_frontmatter"]
    assert hit.description == "Checks DNS resolution."


def test_get_command_of_an_unknown_name_is_not_found_with_suggestions(ctx) -> None:
    with pytest.raises(TroveError) as err:
        get_command(ctx, "network_helpr")
    assert err.value.code == "NOT_FOUND"
    assert "'network_helper'" in err.value.message and "list_commands" in err.value.message


@pytest.mark.parametrize("name", ["../secrets", "a/b", "..", "a\\b", ""])
def test_get_command_of_a_path_is_invalid_argument(ctx, name: str) -> None:
    with pytest.raises(TroveError) as err:
        get_command(ctx, name)
    assert err.value.code == "INVALID_ARGUMENT"


# --------------------------------------------------------------------------- CLI

runner = CliRunner()


def config(tmp_path: Path) -> Path:
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        '[sources]\nreports = "reports"\ncommands = "commands"\n'
        'conversations = "conversations"\n[index]\ndir = "index"\n'
    )
    return cfg


def test_cli_search_commands_prints_a_table_and_json(corpus, tmp_path: Path) -> None:
    corpus()
    cfg = str(config(tmp_path))
    table = runner.invoke(app, ["--config", cfg, "search", "commands", "speech sdk log"])
    assert table.exit_code == 0, table.output
    assert "analyze_zoom_speech_sdk_log" in table.stdout and "tier1" in table.stdout
    raw = runner.invoke(
        app, ["--config", cfg, "search", "commands", "proxy", "--max-results", "1", "--json"]
    )
    assert raw.exit_code == 0, raw.output
    data = json.loads(raw.stdout)
    assert len(data["results"]) == 1 and data["total_found"] >= 1
    assert set(data["results"][0]) == {
        "id",
        "name",
        "score",
        "tier",
        "description",
        "match_reason",
        "stale",
    }
    assert data["results"][0]["stale"] is False and "freshness" in data
    none = runner.invoke(app, ["--config", cfg, "search", "commands", "qqqqzzzz"])
    assert none.exit_code == 0 and "no command matches" in none.stdout


def test_cli_search_commands_bad_input_exits_2(corpus, tmp_path: Path) -> None:
    corpus()
    cfg = str(config(tmp_path))
    empty = runner.invoke(app, ["--config", cfg, "search", "commands", " "])
    assert empty.exit_code == 2 and "INVALID_QUERY" in empty.stderr
    big = runner.invoke(app, ["--config", cfg, "search", "commands", "x", "-n", "101"])
    assert big.exit_code == 2 and "INVALID_ARGUMENT" in big.stderr
