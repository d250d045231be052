"""``web_fetch``: a web page as Markdown, under the turn's cancel scope. One job a module:

- :mod:`.addresses`: which URLs may be opened, and the checked address to connect to.
- :mod:`.fetch`: the HTTP exchange (httpx) within its caps, redirects included.
- :mod:`.convert`: the body as text: HTML to Markdown, text as it is, binary described.
- :mod:`.tool`: :class:`~.tool.WebFetchTool`, what the model sees.
"""
