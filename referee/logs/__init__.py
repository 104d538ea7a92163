"""Game logs as evidence: writing, sealing, validating, replaying and showing them (protocol/LOGS.md).

``log`` (the format and its writer), ``seal`` (hash chain and signatures), ``validate`` and
``evidence`` (every deal replayed against the rules), ``replay`` (one deal record through the
engine), ``leaks`` (transcripts' information leaks), ``show`` and ``tables`` (sheets for people),
``files`` (reading what a folder holds: regular files only, never blocking, confined, bounded JSON).
May import: :mod:`referee.rules`, :mod:`protocol`.  Knows nothing of bot processes.
"""
