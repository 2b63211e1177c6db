"""Bundled resources: the demo corpus, alias maps and icons."""
