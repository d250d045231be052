"""``web_fetch`` and ``web_search``: a web page as Markdown, a web search. One job a module:

- :mod:`.addresses`: which URLs may be opened, and the checked address to connect to.
- :mod:`.fetch`: the HTTP exchange (httpx) within its caps, redirects included.
- :mod:`.convert`: the body as text: HTML to Markdown, text as it is, binary described.
- :mod:`.tool`: :class:`~.tool.WebFetchTool`, what the model sees.
- :mod:`.search`: :class:`~.search.WebSearchTool`, the API's server-side web search,
  asked per use (its request: ``core/turn/web_search.py``).
"""
