"""Memory files and the system prompt built from them."""
