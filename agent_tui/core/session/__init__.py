"""A conversation: takes Ops, runs its work one at a time in one slot, emits Events; its controls, custom commands' turns and rewind."""
