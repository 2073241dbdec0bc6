"""The "off" mechanism: no confinement, only the resource limits.

Chosen explicitly, or by ``choose`` when nothing usable was found. The exec gate's
analysis is then the only protection, which is why it asks more in this mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clawbot_tools.runtime.sandbox import limits as rlimits
from clawbot_tools.runtime.sandbox.policy import Launch, Mechanism, SandboxPolicy


class OffMechanism(Mechanism):
    name = "off"
    confines = False
    hides_names = False
    guards_metadata = False

    def prepare(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str, policy: SandboxPolicy) -> Launch:
        child_env = dict(env)
        child_env["TMPDIR"] = policy.temp_dir
        apply = rlimits.applier(rlimits.rlimits(policy.limits))
        return Launch(argv=tuple(argv), env=child_env, cwd=cwd, preexec_fn=apply, pass_fds=())

    def describe(self) -> tuple[str, ...]:
        return (
            "no sandbox: commands see and change everything the user running clawbot can, and reach the network",
            "resource limits apply: memory (RLIMIT_DATA), file size, processes (not for root), no core dumps",
        )
