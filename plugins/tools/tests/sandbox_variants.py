"""The sandboxes the tests run commands in, by name: the settings a user can choose ("off",
"bwrap", "landlock"), plus Landlock as it runs where user namespaces are disabled, which
"landlock" falls back to there and which runs on any machine with Landlock, so the same
payloads are tried against it here too."""

from __future__ import annotations

import functools

from clawbot_tools.runtime.sandbox.choose import candidates, probe, trial
from clawbot_tools.runtime.sandbox.off import OffMechanism

WITHOUT_NAMESPACES = "landlock-without-namespaces"
CONFINING = ("bwrap", "landlock", WITHOUT_NAMESPACES)
ALL = ("off", *CONFINING)


@functools.lru_cache(maxsize=8)
def find(name: str):
    """``(mechanism, "")`` for ``name`` when it works here, else ``(None, why not)``."""
    if name == "off":
        return OffMechanism(), ""
    if name != WITHOUT_NAMESPACES:
        return probe(name)
    found = candidates("landlock")
    if isinstance(found, str):
        return None, found
    plain = [mechanism for mechanism in found if not mechanism.namespaces]
    if not plain:
        return None, "landlock: no seccomp filter for this machine, so it cannot run without namespaces"
    problem = trial(plain[0])
    return (None, problem) if problem else (plain[0], "")
