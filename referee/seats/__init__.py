"""Bot processes and what holds them: starting a bot, the sandbox, its limits, its faults.

The process layer (``process``, ``streams``, ``groups``), the sandbox (``sandbox``,
``resources``, ``seccomp``), the seat seam between the referee loop and a bot (``seat``),
fault kinds and their explanations (``faults``, ``explain``), a bot's identity and
fingerprint (``identity``) and the watchdog pool of worker processes (``pool``).
May import: :mod:`referee.rules`, :mod:`protocol`.  Knows nothing of logs or tournaments.
"""
