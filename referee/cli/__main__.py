"""``python -m referee.cli``: the ``marias`` command."""

from . import main

main()
