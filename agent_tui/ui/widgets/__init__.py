"""The widgets of the main screen, one per file."""
