"""Learning environments on the rules engine (protocol/RL.md): a PettingZoo AEC environment
(:mod:`.pettingzoo_env`) and an OpenSpiel game (:mod:`.openspiel_game`), both driven by the
action indices and observed through the encoding of :mod:`protocol.observation`.
They need the ``rl`` extra (numpy, gymnasium, pettingzoo, open_spiel)."""
