"""The OpenAI wire formats: Chat Completions (``chat``, every OpenAI-compatible server)
and the Responses API (``responses``), through the official ``openai`` SDK."""
