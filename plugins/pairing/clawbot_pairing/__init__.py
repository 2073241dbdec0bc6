"""clawbot-pairing: a stranger's direct messages reach the agent once the owner approves their code.

The kernel keeps the access rules and asks plugins about a stranger in a direct chat
(``clawbot_direct_stranger``); this plugin answers: an approved sender is let in, a new
stranger gets a one-time code (:mod:`clawbot_pairing.store`), and the owner answers it with
``clawbot pairing approve <channel> <code>`` (:mod:`clawbot_pairing.commands`). State:
``<state dir>/pairing/<channel>.json``, the same files clawbot kept before pairing was a plugin.
"""
