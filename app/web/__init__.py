"""The web page at ``/``: server-rendered HTML over the same services as the API (README, "The
web page"). No CDN: the templates, the style sheet and one small script ship in this package."""
