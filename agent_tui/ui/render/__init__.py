"""How things look: text made safe, diffs, times, usage, states and themes, the past
conversation as the transcript shows it."""
