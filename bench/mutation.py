"""The mutation run: mutmut over trove's core modules, each with only the tests that
matter for it, and the score per module. Not for CI: it takes minutes a module.

    python bench/mutation.py [MODULE ...] [--jobs 2] [--show] [--only PATTERN ...]

MODULE is a path such as query/forgiving.py (default: the modules of MODULES). For each,
the working tree's files that git tracks or would (uncommitted changes too) are copied to
mutants/runs/<module>/, whose pyproject.toml gets [tool.mutmut] with this module as
only_mutate and its tests (TESTS) as the test selection; `mutmut run` runs there, under
`nice -n 10`. Prints killed/total and the surviving mutants (with --show, their diffs).
--only runs only the mutants whose names match (fnmatch, e.g.
"indexer.daemon.xǁDaemonǁ_apply_batch*"), for a module whose tests are too slow to run
for every mutant; the score is then of those.
docs/TESTING.md says how to read them and lists the equivalent ones.

mutmut 3 mutates the code inside functions only: module-level constants (a cut-off such as
forgiving.MIN_SIMILARITY, a regex compiled at import) are left alone, so a test that pins
one is checked by hand (docs/TESTING.md).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Under mutants/ (git ignores it; mypy and the tests do not look there).
OUT = REPO / "mutants" / "runs"
WORKSPACE = "not plain_scan or 1-plan0-whoosh-postings or 2-plan1-scan-texts"
# The reports' differential test against the plain scan: one whoosh and one scan pair for
# the search; for the counting, each way of counting forced on whoosh (the postings, the
# texts, blocks of 4, what follows a token never used or given up, dense postings).
REPORTS = "not plain_scan or 1-plan0-whoosh-cost or 13-plan24-scan-texts"
COUNTING = " or ".join(
    ["not plain_scan"]
    + [f"plan{n}-whoosh-cost" for n in (0, 1, 2, 3, 6, 8, 10, 12)]
    + ["1-plan0-whoosh-postings", "1-plan0-whoosh-texts"]
)
# The tests that exercise each module, fast enough to run once per mutant (mutmut runs,
# for each mutant, only those of them that call the mutated function).
TESTS = {
    "query/forgiving.py": ["tests/test_forgiving.py", "tests/test_reports_tiers.py"],
    # Every search_workspace calls check_date_range: only the tests of dates.
    "query/workspace/dates.py": [
        "tests/test_properties.py",
        *(
            f"tests/test_workspace_search.py::{name}"
            for name in (
                "test_a_day_filters_to_that_day_folder_only",
                "test_a_month_matches_the_month_folder_and_every_day_folder_of_it",
                "test_without_a_date_range_every_conversation_is_searched",
                "test_anything_but_a_month_or_a_day_is_invalid_date_range",
                "test_date_ranges_are_checked_strictly",
            )
        ),
    ],
    "query/elog/filters.py": ["tests/test_elog_search.py"],
    "query/elog/dates.py": ["tests/test_properties.py", "tests/test_elog_search.py"],
    "query/elog/threads.py": ["tests/test_elog_search.py"],
    "query/args.py": ["tests/test_args.py", "tests/test_cli_query.py"],
    "query/paging.py": ["tests/test_paging.py"],
    "query/tools.py": ["tests/test_tools.py"],
    "query/budget.py": ["tests/test_budget.py"],
    "query/parts.py": ["tests/test_parts.py"],
    "query/citations.py": ["tests/test_citations.py"],
    # The rest of test_freshness.py runs trove mcp processes, which mutmut cannot see into.
    "query/freshness.py": [
        f"tests/test_freshness.py::{name}"
        for name in (
            "test_a_time_is_written_in_utc_to_the_millisecond",
            "test_with_no_status_file_there_is_no_watcher",
            "test_an_unreadable_status_file_is_no_watcher",
            "test_a_live_watcher_is_named_with_its_mode_and_pending_changes",
            "test_a_watcher_of_an_unknown_kind_or_without_a_pid_is_shown_as_a_daemon",
            "test_a_stopped_watcher_is_no_watcher_and_its_pending_changes_are_not_counted",
            "test_an_answer_is_catching_up_while_the_watcher_has_not_caught_up_its_collection",
            "test_the_watcher_in_this_process_answers_from_memory_while_it_watches",
            "test_the_status_file_is_read_again_only_when_it_changed",
            "test_the_freshness_of_a_snapshot_is_as_of_its_commit_in_its_collection",
            "test_combined_freshness_is_the_oldest_commit_all_pending_and_any_catching_up",
            "test_a_file_changed_or_gone_since_the_commit_is_stale",
            "test_the_commit_time_is_shown_in_local_time_or_never",
            "test_the_summary_names_the_watcher_its_mode_and_what_it_is_doing",
            "test_the_warning_says_why_an_answer_may_not_show_the_files_as_they_are",
        )
    ],
    "indexer/seat.py": ["tests/test_seat.py"],
    "indexer/mounts.py": ["tests/test_mounts.py"],
    "indexer/polling.py": ["tests/test_polling.py"],
    "query/site/render.py": ["tests/test_render.py"],
    # The query language through search, against a plain scan of the sample only.
    "query/search_all.py": [
        "tests/test_search_all.py",
        "tests/test_query_language.py",
        "-k",
        "not generated",
    ],
    "query/elog/regex_search.py": [
        "tests/test_elog_search.py",
        "tests/test_elog_regex_literals.py",
        "tests/test_properties.py",
    ],
    # The differential test against the plain scan, on 2 of its 24 engines and plans.
    "query/workspace/tiers.py": ["tests/test_workspace_search.py", "-k", WORKSPACE],
    "query/workspace/answers.py": ["tests/test_workspace_search.py", "-k", WORKSPACE],
    "query/syntax.py": ["tests/test_syntax.py"],
    "query/reports/search.py": [
        "tests/test_reports_search.py",
        "tests/test_reports_tiers.py",
        "-k",
        REPORTS,
    ],
    # The corrections against the scan of the lexicon on the sample (not the generated corpus).
    "query/reports/tiers.py": [
        "tests/test_reports_tiers.py",
        "tests/test_neighbours.py",
        "-k",
        "not generated",
    ],
    "query/reports/counting.py": [
        "tests/test_reports_search.py",
        "tests/test_text_count.py",
        "tests/test_fragments.py",
        "tests/test_phrases.py",
        "tests/test_counting_edges.py",
        "-k",
        COUNTING,
    ],
    "indexer/held.py": ["tests/test_held.py"],
    "indexer/events.py": ["tests/test_events.py"],
    # The store's reconcile, apply and commit, the commits that fail or meet a damaged
    # index, the summary `trove reindex --json` prints, and the derived files a reconcile
    # writes anew (the durability tests of the daemon run with it).
    "indexer/store.py": [
        "tests/test_store.py",
        "tests/test_durability.py",
        "tests/test_cli_index.py",
        "tests/test_fragments.py",
        "tests/test_sequences.py",
        "-k",
        (
            "test_store or failed_commit or damaged_index or test_cli_index or test_fragments"
            " or test_sequences"
        ),
    ],
    # The durability paths: the index folder's marker, lock and damage, against the
    # store's tests, the durability tests, the CLI's (a folder that is not ours) and the
    # query side's readers (an index of another schema reopened).
    "indexer/collection.py": [
        "tests/test_store.py",
        "tests/test_durability.py",
        "tests/test_cli_index.py",
        "tests/test_indexes.py",
    ],
    "indexer/daemon.py": ["tests/test_daemon.py", "tests/test_durability.py"],
}
MODULES = list(TESTS)


def toml_value(value: object) -> str:
    """A string, number, boolean or list of them as TOML (JSON's spelling fits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def prepare(module: str, work: Path) -> None:
    """The working tree's files in ``work``, mutmut configured for ``module``."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    listed = subprocess.run(
        # Tracked files and new ones git does not ignore, as they are in the working tree.
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        + ["query", "indexer", "tests", "data", "bench", "docs", "README.md", "trove.toml"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = REPO / name
        if source.is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name)
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    config = dict(tomllib.loads(text)["tool"]["mutmut"])
    config["only_mutate"] = [module]
    config["pytest_add_cli_args_test_selection"] = [
        t
        for t in TESTS[module]
        if not t.startswith("tests/") or (work / t.partition("::")[0]).exists()
    ]
    section = "[tool.mutmut]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in config.items())
    # The section runs to the next table header (or the end of the file).
    pattern = r"^\[tool\.mutmut\]\n(?:(?!\[).*\n|\n)*"
    text = re.sub(pattern, section + "\n", text, flags=re.MULTILINE)
    (work / "pyproject.toml").write_text(text, encoding="utf-8")


def mutmut(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["nice", "-n", "10", sys.executable, "-m", "mutmut", *args],
        check=False,  # run's failure is reported by the caller
        cwd=work,
        capture_output=True,
        text=True,
    )


def run(module: str, jobs: int, show: bool, only: list[str]) -> dict[str, int]:
    work = OUT / module.replace("/", "_").removesuffix(".py")
    prepare(module, work)
    done = mutmut(work, "run", "--max-children", str(jobs), *only)
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"mutmut run failed for {module} (exit {done.returncode})")
    mutmut(work, "export-cicd-stats")
    stats: dict[str, int] = json.loads((work / "mutants" / "mutmut-cicd-stats.json").read_text())
    results = mutmut(work, "results").stdout
    # A mutant no test of the selection reaches is no better than one that survived.
    survivors = [
        (name.strip(), status.strip())
        for name, _, status in (line.rpartition(":") for line in results.splitlines())
        if status.strip() in ("survived", "no tests")
    ]
    # Those run (with --only, the rest are counted in the total as not checked).
    tried = sum(stats[k] for k in ("killed", "survived", "no_tests", "timeout", "suspicious"))
    score = stats["killed"] + stats["timeout"]
    print(
        f"{module}: {score}/{tried} killed ({100 * score / max(tried, 1):.1f}%), "
        f"{stats['survived']} survived, {stats['no_tests']} without tests, "
        f"{stats['timeout']} timed out (counted killed), of {stats['total']} mutants",
        flush=True,
    )
    for name, status in survivors:
        print(f"  {status}: {name}")
        if show:
            diff = mutmut(work, "show", name).stdout
            for line in diff.splitlines():
                if line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
                    print(f"    {line}")
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", default=MODULES, help="modules to mutate")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    parser.add_argument(
        "--only", action="append", default=[], help="run only mutants matching (fnmatch)"
    )
    args = parser.parse_args()
    unknown = [m for m in args.modules if m not in TESTS]
    if unknown:
        parser.error(f"no tests listed for {unknown} in TESTS (bench/mutation.py)")
    configured = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    if set(configured["tool"]["mutmut"]["only_mutate"]) != set(TESTS):
        parser.error("only_mutate in pyproject.toml and TESTS here name different modules")
    for module in args.modules:
        run(module, args.jobs, args.show, args.only)


if __name__ == "__main__":
    main()
