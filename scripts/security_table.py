"""The security table: every adversarial case the suite tries, by category, tried / safe.

Each parametrized case of the security tests is one row: an attack (a command, a path, a
piece of Python the model might run, a hostile notebook) and the evidence that it failed
(the call asked or was denied, a sentinel file does not exist, the secret is not in the
saved outputs, the policy was restored). This script runs those tests — unit level and in
real kernels — and counts them by category, so the README's table is measured, not typed.

Run: .venv/bin/python scripts/security_table.py  (exit status 1 if any case is unsafe)
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The security tests: whole modules, and single tests from modules about other things.
TARGETS = [
    "tests/permissions/test_security_cases.py",
    "tests/permissions/test_declarations.py",
    "tests/permissions/test_integrity.py",
    "tests/notebook/test_kernel_security.py",
    "tests/agent/test_wire.py::test_content_the_api_rejects_is_replaced_and_the_conversation_goes_on",
    "tests/agent/test_wire.py::test_a_rejection_not_caused_by_the_run_changes_nothing",
    "tests/tools/test_files.py::test_one_malformed_cell_does_not_hide_the_notebook",
    "tests/notebook/test_kernel_tools.py::test_notebook_read_marks_a_malformed_cell_and_shows_the_rest",
    "tests/notebook/test_kernel_magic.py::test_a_secret_named_variable_never_reaches_the_saved_outputs",
    # issue 18: the trust boundary of notebooks from someone else
    "tests/notebook/test_replay_forged_kernel.py",
    "tests/notebook/test_replay_plan.py",
    "tests/notebook/test_call_detail.py::test_the_approval_card_shows_hidden_characters_escaped",
    "tests/agent/test_subagents.py::test_a_definition_in_code_does_not_widen_the_parents_mode",
    "tests/agent/test_subagents.py::test_which_modes_widen_which",
    "tests/agent/test_subagent_files.py::test_a_file_may_not_widen_the_mode",
    "tests/permissions/test_shell_reach.py",
    "tests/notebook/test_kernel_shell_writes.py",
    "tests/sessions/test_cli.py::test_an_exported_script_never_runs_record_text_as_code",
    "tests/sessions/test_cli.py::test_an_exported_notebook_never_runs_record_text_as_code",
    "tests/sessions/test_export_safety.py",
    "tests/settings/test_config_files.py",
    "tests/notebook/test_kernel_config_files.py",
    "tests/sessions/test_store.py::test_every_folder_the_store_creates_is_private_and_no_other_changes",
    "tests/sessions/test_store.py::test_a_folder_that_already_exists_keeps_its_mode",
    "tests/settings/test_trust.py::test_the_folders_the_trust_store_creates_are_private",
    "tests/test_name_validators.py",
    "tests/mcp/test_names.py",
    "tests/notebook/test_kernel_trust_boundary.py",
    "tests/tools/test_web_address.py",
    "tests/sessions/test_redact_properties.py",
    "tests/sessions/test_redact.py::test_a_secret_env_value_counts_from_eight_characters",
    "tests/sessions/test_redact.py::test_an_explicit_secret_counts_from_four_characters",
    "tests/sessions/test_redact.py::test_a_secret_inside_the_marker_does_not_grow_earlier_markers",
    # issue 35: the four promises, each held at one place
    "tests/notebook/test_replay_runs_what_it_shows.py",
    "tests/notebook/test_undo_loses_nothing.py",
    *(f"tests/checkpoints/test_file_checkpoints.py::test_a_{name}" for name in (
        "rewind_never_writes_through_a_folder_turned_into_a_link",
        "rewind_does_not_replace_a_link_at_the_files_own_name", "mode_only_change_is_rewound",
        "file_whose_folder_is_gone_is_restored_with_it",
        "restore_outside_the_working_folders_is_refused")),
    "tests/notebook/test_reload_while_a_cell_runs.py",
    "tests/notebook/test_failed_prompt_left_out.py",
    "tests/agent/test_wire.py::test_a_prompt_the_api_never_answered_is_not_sent_again",
    "tests/agent/test_store_writes.py::test_each_entry_reaches_each_destination_once_with_one_uuid",
    "tests/notebook/test_cell_change_guard.py",
    "tests/notebook/test_change_cases.py",
    "tests/notebook/test_headless_notebook_guess.py",
    "tests/settings/test_bad_files.py",
    "tests/sessions/test_store_bad_transcripts.py",
    "tests/sessions/test_cli_one_line.py",
    "tests/mcp/test_remote_config_characters.py",
    "tests/acp/test_acp_bad_input.py",
    "tests/acp/test_acp_bad_transcript.py",
    "tests/acp/test_acp_permission_shown.py",
    "tests/acp/test_acp_question_shown.py",
    "tests/sessions/test_split_secrets.py",
    "tests/sessions/test_split_secrets_stored.py",
    "tests/notebook/test_kernel_output_redaction.py",
    "tests/notebook/test_live_view_split_secrets.py",
    "tests/acp/test_acp_split_secrets.py",
    "tests/sessions/test_split_secrets_cut.py",
    "tests/sessions/test_split_secrets_cut_stored.py",
    "tests/notebook/test_kernel_cut_secrets.py",
    "tests/notebook/test_kernel_context_cut_secrets.py",
    "tests/notebook/test_terminal_secrets.py",
    "tests/notebook/test_call_detail_fields.py",
    "tests/acp/test_acp_cut_secrets.py",
    "tests/test_wire_body.py::test_a_message_replaced_by_a_copy_sharing_its_content_is_encoded_again",
]

#: (category, pattern on "module.function"); the first match decides.
CATEGORIES = [
    ("A replay runs only what its consent card shows: the card drawn from the very tools "
     "that run, a RunCell showing and running the code it runs (issue 35, finding 1)",
     r"test_replay_runs_what_it_shows|check_runs|what_a_call_would_do"),
    ("Undo and rewinds lose nothing: state compared before writing, no link followed, "
     "nothing outside the working folders, what cannot be undone named (findings 2-4)",
     r"test_undo_loses_nothing|test_file_checkpoints\.test_a_(rewind|mode_only|file_whose|"
     r"restore_outside)"),
    ("A run's record and conversation: a reloaded tab, a failed prompt, store entries "
     "once (findings 5-7)",
     r"test_reload_while|test_failed_prompt|never_answered|reaches_each_destination"),
    ("Cell changes: one table for the extension and its emulation, cells changed since "
     "never overwritten (finding 18)", r"test_change_cases|test_cell_change_guard"),
    ("A headless run's notebook: a planted notebook is never replayed (finding 8)",
     r"test_headless_notebook_guess"),
    ("Files the product did not write, and bad arguments: one bounded reader, one line "
     "(finding 9 and its class)",
     r"test_bad_files|test_store_bad_transcripts|test_cli_one_line|test_remote_config"),
    ("ACP: bad input one JSON-RPC error, asks that show what runs (findings 10, 11)",
     r"test_acp_(bad_input|bad_transcript|permission_shown|question_shown)"),
    ("Secrets split across pieces or cut by a cap (redacted whole, then cut), every field "
     "a kernel message shows, the terminal's answer and questions (finding 13 and its "
     "class)", r"split_secrets|cut_secrets|test_kernel_output_redaction|test_terminal_secrets|"
     r"test_call_detail_fields"),
    ("Mutations that survived the suite (findings 12, 14-17)",
     r"protected_dot_file|names_no_protected_file|string_is_not_the_users|"
     r"called_from_the_users_code|only_the_prompt|copy_sharing_its_content|"
     r"hidden_character_only_in_a_key"),
    ("Replayed records: the card lists every call that runs, whole and with hidden "
     "characters revealed; records that read more than one way are refused (issue 18, "
     "findings 1-6)", r"test_replay_forged_kernel|test_replay_plan|approval_card_shows_hidden"),
    ("Subagents do not widen their parent's mode (issue 18, finding 7)",
     r"widen_the_(parents_)?mode|which_modes_widen"),
    ("acceptEdits through globs, copied folders, option destinations and links (issue 18, "
     "finding 8)", r"test_shell_reach|test_kernel_shell_writes"),
    ("Record text in exported scripts and notebooks (issue 18, finding 9)",
     r"exported_(script|notebook)_never_runs|test_export_safety"),
    ("Unreadable or deeply nested configuration files (issue 18, finding 10)",
     r"test_config_files|test_kernel_config_files"),
    ("Private folders of the session and trust stores (issue 18, finding 11)",
     r"creates_are_private|creates_is_private|already_exists_keeps_its_mode"),
    ("Names with a trailing newline (issue 18, finding 12)",
     r"test_name_validators|test_names\."),
    ("Output written later, and how later cells are read (issue 18, finding 13)",
     r"test_kernel_trust_boundary"),
    ("WebFetch addresses wrapped in IPv6 (6to4, Teredo, NAT64; issue 18)",
     r"test_web_address"),
    ("Shell parsing: compound commands, substitutions, wrappers, quoting, controls "
     "(security.md rows 1-3, 10, 20)", r"test_row(1|2|3|10|20)_"),
    ("acceptEdits through sed: scripts that run, write or read other files (issue 8, "
     "finding 1; row 7)", r"_sed(_|\[|$)"),
    ("Shell: read-only set, exec flags, interpreters, network (rows 5-7, 16, 17, 32)",
     r"test_row(5|6|7|16|17|32)_|test_(assignments|expansions)"),
    ("Shell: redirects, cd, critical removals, killing the agent, spawning agents "
     "(rows 11, 13, 18, 19, 35)", r"test_row(11|13|18|19|35)_"),
    ("File boundary: siblings, symlinks, protected paths, unsafe strings, read denies "
     "(rows 21-29)", r"test_row(21|23|25|28|29)_"),
    ("Allow rules outside the working directories (finding 3)",
     r"outside|bare_and_star|rules_that_name"),
    ("Tool declarations: plan mode, modes by kind, Always allow (finding 2)",
     r"test_declarations|plan_mode"),
    ("Policy integrity: the agent rewriting its own policy (finding 4)",
     r"test_integrity|rewrite|reachable|thread_left|switches|test_code_seal|test_mcp_tampering"),
    ("Secrets reaching the saved notebook (finding 5)", r"redacted|secret|test_redact"),
    ("Unbounded results (finding 6)", r"huge|bloat|flood"),
    ("Content the API rejects (finding 7)", r"poison|rejects|rejection"),
    ("Malformed notebooks (finding 8)", r"malformed"),
]


def run_tests(report: Path) -> int:
    """Run the security tests with a JUnit report; returns pytest's exit status."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--no-header", f"--junitxml={report}", *TARGETS]
    return subprocess.run(command, cwd=ROOT, check=False).returncode


def outcomes(report: Path) -> list[tuple[str, bool]]:
    """(module.function[params], passed) for every case in the report."""
    cases = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        passed = not any(child.tag in ("failure", "error", "skipped") for child in case)
        cases.append((f"{case.get('classname')}.{case.get('name')}", passed))
    return cases


def table(cases: list[tuple[str, bool]]) -> tuple[list[tuple[str, int, int]], list[str]]:
    """Rows (category, tried, safe) and the cases no category claims."""
    counts = {name: [0, 0] for name, _ in CATEGORIES}
    stray = []
    for case, passed in cases:
        category = next((name for name, pattern in CATEGORIES if re.search(pattern, case)),
                        None)
        if category is None:
            stray.append(case)
            continue
        counts[category][0] += 1
        counts[category][1] += passed
    return [(name, tried, safe) for name, (tried, safe) in counts.items()], stray


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "security.xml"
        status = run_tests(report)
        if not report.exists():
            print(f"pytest did not run (exit status {status})", file=sys.stderr)
            return 1
        rows, stray = table(outcomes(report))
    print("\n| category | cases tried | safe |\n|---|---:|---:|")
    for name, tried, safe in rows:
        print(f"| {name} | {tried} | {safe} |")
    tried, safe = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| **all** | **{tried}** | **{safe}** |")
    if stray:
        print(f"\n{len(stray)} case(s) in no category (add a pattern): {', '.join(stray[:5])}")
    return 0 if tried == safe and tried > 0 and not stray else 1


if __name__ == "__main__":
    sys.exit(main())
