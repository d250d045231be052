"""``grep`` and ``glob``: read-only searches of the workspace, one job a module.

- :mod:`.query`: what one search asks for (:class:`~.query.Query`), for either back end.
- :mod:`.ripgrep`: the command lines: ripgrep's, or the Python fallback's.
- :mod:`.fallback`: the search without ripgrep, run as a child process.
- :mod:`.wire`: the output format both back ends print, and its reader.
- :mod:`.runner`: one search process under the call's cancel scope, output bounded.
- :mod:`.results`: the findings worded for the model, within their caps.
- :mod:`.tools`: :class:`~.tools.GrepTool` and :class:`~.tools.GlobTool`, on what they share
  (:class:`~.tools.SearchTool`: which files a deny rule on reading hides).
"""
