"""The screenshots in docs/ are the snapshot tests' SVGs, copied.

    python -m tests.snapshot_tests.screenshots    # copy them again after --snapshot-update

``test_docs_screenshots_match_the_snapshots`` fails when a copy is stale.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "__snapshots__"
DOCS = ROOT / "docs" / "screenshots"

# docs/screenshots/NAME -> the snapshot it shows
SOURCES = {
    "approval-command.svg": "test_approval_snapshots/test_the_prompt_for_each_kind_of_call[COMMAND].svg",
    "approval-edit.svg": "test_approval_snapshots/test_the_prompt_for_each_kind_of_call[EDIT].svg",
    "edit-diff.svg": "test_approval_snapshots/test_an_edit_after_it_ran_shows_its_numbered_diff.svg",
    "approval-and-queued.svg": "test_ui_snapshots/TestToolStates.test_queued_call_waits_behind_one_awaiting_approval.svg",
    "background-jobs.svg": "test_ui_snapshots/test_background_jobs_screen.svg",
    "cancelled-mixed.svg": "test_ui_snapshots/test_cancelled_turn_with_mixed_tool_states.svg",
    "cancelling-progress.svg": "test_ui_snapshots/TestToolStates.test_cancelling_shows_cleanup_progress_while_one_call_still_runs.svg",
    "help.svg": "test_ui_snapshots/test_help_screen.svg",
    "status-command.svg": "test_status_line_tui/test_status_line_snapshot.svg",
    "plan-approval.svg": "test_ui_plan_mode/test_a_plan_waits_for_approval.svg",
    "plan-mode.svg": "test_ui_plan_mode/test_plan_mode_in_the_status_line.svg",
    "high-contrast.svg": "test_ui_snapshots/test_themes_cancelled_mixed[high-contrast].svg",
    "idle.svg": "test_ui_snapshots/test_idle_empty.svg",
    "journal-error.svg": "test_ui_snapshots/test_journal_error_stays_in_the_status_line.svg",
    "light.svg": "test_ui_snapshots/test_themes_cancelled_mixed[light].svg",
    "permission.svg": "test_ui_snapshots/test_permission_prompt.svg",
    "retry.svg": "test_ui_snapshots/test_retry_scheduled_shows_the_countdown.svg",
    "resumed.svg": "test_ui_snapshots/test_a_resumed_session_shows_its_conversation.svg",
    "returned.svg": "test_ui_snapshots/test_returned_message_is_back_in_the_input.svg",
    "rewind-conflicts.svg": "test_ui_snapshots/TestRewind.test_rewind_asks_before_overwriting_files_changed_since.svg",
    "rewind-menu.svg": "test_ui_snapshots/TestRewind.test_rewind_menu_lists_messages_and_undo_points.svg",
    "rewind-plan.svg": "test_ui_snapshots/TestRewind.test_rewind_plan_with_a_conflict_and_what_cannot_be_undone.svg",
    "rewound.svg": "test_ui_snapshots/TestRewind.test_rewound_text_is_back_in_the_input_below_a_divider.svg",
    "steer-and-follow-up.svg": "test_ui_snapshots/TestToolStates.test_follow_up_queued_next_to_a_steer.svg",
    "steers.svg": "test_ui_snapshots/test_steers_queued_and_applied.svg",
    "subagent-interrupted.svg": "test_ui_snapshots/TestSubAgents.test_interrupted_task_keeps_each_nested_calls_own_state.svg",
    "subagent-running.svg": "test_ui_snapshots/TestSubAgents.test_task_call_with_nested_calls_of_its_sub_agent.svg",
    "tool-end-states.svg": "test_ui_snapshots/TestToolStates.test_all_six_end_states_side_by_side.svg",
    "tool-output-expanded.svg": "test_ui_snapshots/test_expanded_tool_output_keeps_the_tail_and_shows_the_result.svg",
    "tool-running.svg": "test_ui_snapshots/test_tool_running_shows_last_output_line.svg",
    "command-menu.svg": "test_ui_snapshots_daily/TestCommandMenu.test_slash_lists_every_command.svg",
    "command-menu-filtered.svg": "test_ui_snapshots_daily/TestCommandMenu.test_typing_filters_the_menu.svg",
    "command-menu-no-match.svg": "test_ui_snapshots_daily/TestCommandMenu.test_no_command_matches.svg",
    "model-picker.svg": "test_ui_snapshots_daily/test_model_picker.svg",
    "cost.svg": "test_ui_snapshots_daily/test_cost_page_per_turn_with_interrupted_apart.svg",
    "file-picker.svg": "test_ui_snapshots_daily/TestFilePicker.test_at_filters_the_workspace_files.svg",
    "attachment-chip.svg": "test_ui_snapshots_daily/TestFilePicker.test_a_chosen_file_is_a_chip_and_folds_in_the_transcript.svg",
    "image-chips.svg": "test_ui_images/TestImageSnapshots.test_chips_for_a_pasted_image_and_a_refused_one.svg",
    "diff-folded.svg": "test_ui_snapshots_daily/TestDiffs.test_a_long_diff_folds_to_its_summary.svg",
    "diff-unfolded.svg": "test_ui_snapshots_daily/TestDiffs.test_unfolded_every_line_has_its_symbol.svg",
    "permission-diff.svg": "test_ui_snapshots_daily/TestDiffs.test_the_permission_prompt_shows_the_diff.svg",
    "queue-selected.svg": "test_ui_snapshots_daily/TestQueueEditing.test_a_queued_item_selected.svg",
    "queue-edit.svg": "test_ui_snapshots_daily/TestQueueEditing.test_editing_a_queued_item.svg",
    "thinking-folded.svg": "test_ui_snapshots_daily/TestThinking.test_thinking_is_folded_to_one_dim_line.svg",
    "thinking-unfolded.svg": "test_ui_snapshots_daily/TestThinking.test_ctrl_o_unfolds_the_thinking.svg",
    "compaction.svg": "test_ui_snapshots_daily/test_compaction_dividers_and_a_new_conversation.svg",
}


def main() -> None:
    for name, source in SOURCES.items():
        shutil.copyfile(SNAPSHOTS / source, DOCS / name)
    print(f"copied {len(SOURCES)} screenshots to {DOCS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
