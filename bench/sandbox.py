"""Spawn cost of a command under each sandbox mechanism, side by side in one run.

Run:  uv run python bench/sandbox.py [--runs 60]

Starts ``/bin/sh -c true`` the way exec does (asyncio ``subprocess_exec``, a new session,
stdout piped) and waits for it to end, ``--runs`` times per mode after warm-ups, rotating
through the modes so machine load hits them alike:

  * ``plain``     no sandbox, no limits (what exec did before the sandbox)
  * ``off``       the "off" mechanism: resource limits only
  * ``landlock``  user + net namespaces, seccomp below ABI 9, the Landlock ruleset
  * ``landlock-plain``  the same ruleset without namespaces (where they are disabled):
                  capabilities dropped, a seccomp filter refusing network sockets
  * ``bwrap``     bubblewrap with every namespace and the default mounts

Each figure includes ``prepare()`` (building the ruleset or the bwrap argv) and
``Launch.close()``. Prints median and p90 in milliseconds, and the median cost added over
plain (target: at most 10 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from clawbot_tools.runtime.sandbox import SandboxPolicy
from clawbot_tools.runtime.sandbox.choose import candidates, probe
from clawbot_tools.runtime.sandbox.off import OffMechanism

ARGV = ["/bin/sh", "-c", "true"]
ENV = {"PATH": "/usr/bin:/bin"}


async def spawn(mechanism, policy: SandboxPolicy) -> float:
    started = time.perf_counter()
    loop = asyncio.get_running_loop()
    if mechanism is None:
        argv, env, cwd, preexec, fds, close = ARGV, ENV, policy.workspace, None, (), None
    else:
        launch = mechanism.prepare(ARGV, env=ENV, cwd=policy.workspace, policy=policy)
        argv, env, cwd, preexec, fds, close = launch.argv, launch.env, launch.cwd, launch.preexec_fn, launch.pass_fds, launch.close
    done = loop.create_future()

    class Protocol(asyncio.SubprocessProtocol):
        def process_exited(self) -> None:
            done.set_result(None)

    transport, _ = await loop.subprocess_exec(
        Protocol,
        *argv,
        env=env,
        cwd=cwd,
        preexec_fn=preexec,
        pass_fds=fds,
        start_new_session=True,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    if close is not None:
        close()
    await done
    transport.close()
    return (time.perf_counter() - started) * 1000


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


async def main(runs: int) -> None:
    modes: dict[str, object] = {"plain": None, "off": OffMechanism()}
    skipped = []
    for name in ("landlock", "bwrap"):
        mechanism, problem = probe(name)
        if mechanism is None:
            skipped.append(f"{name}: {problem}")
        else:
            modes[name] = mechanism
        if name == "landlock" and mechanism is not None:
            found = candidates("landlock")
            plain = [candidate for candidate in found if not candidate.namespaces] if isinstance(found, list) else []
            if plain:
                modes["landlock-plain"] = plain[0]
    with tempfile.TemporaryDirectory() as folder:
        ws, temp = Path(folder, "ws"), Path(folder, "tmp")
        ws.mkdir()
        temp.mkdir(mode=0o700)
        policy = SandboxPolicy(workspace=str(ws), temp_dir=str(temp))
        times: dict[str, list[float]] = {name: [] for name in modes}
        for round_ in range(runs + 5):
            for name, mechanism in modes.items():
                elapsed = await spawn(mechanism, policy)
                if round_ >= 5:
                    times[name].append(elapsed)
    plain = statistics.median(times["plain"])
    print(f"spawn of {' '.join(ARGV)!r} via asyncio, {runs} runs each (ms)")
    print(f"{'mode':15} {'median':>8} {'p90':>8} {'added':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:15} {median:8.2f} {p90(values):8.2f} {median - plain:+8.2f}")
    for line in skipped:
        print(f"not measured: {line}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    asyncio.run(main(parser.parse_args().runs))
