"""The memory provider's lifecycle: ``clawbot run`` starts it for every agent once up, and
every command closes it when the kernel shuts down; a provider whose start fails leaves the
gateway answering."""

from __future__ import annotations

from pathlib import Path

from . import filememory
from .memkit import clawbot, setup_home


def test_run_starts_the_provider_for_every_agent_and_closes_it_at_shutdown(clawbot_home: Path, site: Path, fake_llm_thread) -> None:
    setup_home(clawbot_home, site, fake_llm_thread.base_url)
    fake_llm_thread.reply("Hello!")
    run = clawbot(clawbot_home, "run", stdin="hello\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["Hello!"]
    assert filememory.log_lines(clawbot_home) == ["open", "start alice,bob", "close"]


def test_a_one_shot_command_never_starts_the_provider_but_closes_it(clawbot_home: Path, site: Path, fake_llm_thread) -> None:
    setup_home(clawbot_home, site, fake_llm_thread.base_url)
    fake_llm_thread.reply("hi")
    assert clawbot(clawbot_home, "agent", "-m", "hi").returncode == 0
    assert clawbot(clawbot_home, "memory", "status").returncode == 0
    assert filememory.log_lines(clawbot_home) == ["open", "close", "open", "close"]


def test_a_provider_that_fails_to_start_is_logged_and_the_gateway_answers(clawbot_home: Path, site: Path, fake_llm_thread) -> None:
    setup_home(clawbot_home, site, fake_llm_thread.base_url)
    fake_llm_thread.reply("Still here.")
    run = clawbot(clawbot_home, "run", stdin="hello\n", env={"FILES_MEMORY_START_FAILS": "1"})
    assert (run.returncode, run.stdout.splitlines()) == (0, ["Still here."])
    log = (clawbot_home / "logs" / "gateway.log").read_text(encoding="utf-8")
    assert "memory provider files failed to start; searches still work and sync when stale" in log
    assert "OSError: the memory folder cannot be watched" in log  # the traceback is in the log file, not on the terminal
    assert filememory.log_lines(clawbot_home)[-1] == "close"


async def test_the_kernel_closes_every_memory_provider_once_whatever_one_of_them_raises(make_kernel, clawbot_home: Path) -> None:
    from clawbot.testing import plugin_from_hooks

    class Failing(filememory.FileMemory):
        name = "spare"

        async def close(self) -> None:
            self._log("close spare")
            raise RuntimeError("the spare index is locked")

    def providers(ctx):  # noqa: ANN001, ANN202
        return [Failing(ctx.clawbot, ctx.env, Path(ctx.state_dir)), filememory.FileMemory(ctx.clawbot, ctx.env, Path(ctx.state_dir))]

    kernel = await make_kernel(plugins={"pair": plugin_from_hooks(clawbot_memory_providers=providers)}, config='[memory]\nprovider = "files"\n')
    await kernel.aclose()
    await kernel.aclose()
    assert filememory.log_lines(clawbot_home) == ["open", "open", "close spare", "close"]
