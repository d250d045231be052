"""The Textual app (``main.py``) and the parts it is built from, each given only what
it uses of the app; ``run.py`` runs it as the command line does."""

from agent_tui.ui.app.main import AgentApp, SessionLike

__all__ = ["AgentApp", "SessionLike"]
