"""The turn loop: a model request, its streamed reply, the tool batch, and what the turn tells."""
