"""The largest values the command line and tournament files accept for each number.

A larger one is a typo or an attempt to stall the referee (``move_ms:
99999999999999999999``); it is refused with a message naming the option and
the maximum, never passed on.
"""

MAX_PARTIE = 100_000
MAX_MOVE_MS = 600_000  # 10 minutes per decision
MAX_STARTUP_MS = 600_000
MAX_BANK_MS = 86_400_000  # a day per partie
MAX_INCREMENT_MS = 600_000
MAX_FAULTS = 100
MAX_CONCURRENCY = 512
MAX_SERIES = 100_000
MAX_SEED_CHARS = 200
