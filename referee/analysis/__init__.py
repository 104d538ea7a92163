"""Analysis of logs: every decision valued double-dummy and from the seat's view (``marias analyze``).

:mod:`.values` values each legal card with the ``search`` bot's exact solver, with every hand
known and over worlds consistent with the seat's view; :mod:`.deals` walks one deal record
through the engine and values its decisions; :mod:`.bidding` judges the declared game, the
betls and durches passed by and the raises; :mod:`.summary` makes the per-bot table and the
listings; :mod:`.run` reads logs and event folders and runs the work in processes;
:mod:`.cache` keeps a log's analysis beside it, hidden from the bots; :mod:`.bench` measures
the analysis against the search bot's own thinking.

This layer sits above the tournaments (it reads their folders) and below the tools and the
web (the replayer will show its data).
"""
