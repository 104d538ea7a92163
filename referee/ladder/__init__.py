"""A ladder (``marias ladder``): a season that runs itself — bot versions entered at any time, duplicate
groups played continuously, each version rated with its uncertainty (protocol/TOURNAMENT.md, "Ladder").

``folder`` (the ladder's folder and database, the data API: :class:`~referee.ladder.folder.LadderFolder`),
``rating`` (openskill over duplicate groups), ``pairing`` (who plays next), ``store`` (what the runner
writes), ``run`` (the runner; ``cluster``: its loop on Dask), ``archive`` (old logs gzipped), ``table``
(the leaderboard as text), ``bench`` (``marias bench ladder``).
"""
