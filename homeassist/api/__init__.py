"""The control API: a small HTTP server on 127.0.0.1 for ``/ask``, ``/health``, ``/metrics`` and muting,
and the client the command line uses to reach a running daemon."""
