"""Serving: the collector's running machinery, below every other room. ``runner`` refreshes sources on their
own threads into one ``Store``; ``refresh_log`` says what each round did; ``webconfig`` and ``webserver``
serve a rendered page over HTTP(S) with basic auth, Prometheus' ``--web.config.file`` format.

May import: the core (``monitor``) and the standard library; no other room (a page to serve is handed in)."""
