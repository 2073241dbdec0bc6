"""Entry point of the sub-agents plugin: ``clawbot_subagents.plugin:plugin``.

The sub-agents running belong to one kernel: the tool starts them (through the
:class:`~clawbot_subagents.api.Subagents` capability), ``/subagents`` lists and stops them,
``/stop`` and ``/new`` end a chat's, and a gateway's start announces those a restart cut off.
So every hook reaches the same :class:`~clawbot_subagents.runs.SubagentRegistry`, made at the
first registration hook of each kernel. The plugin is an object rather than a module so
each kernel (each test) can hold its own instance; the entry point's instance serves the
process's kernel.

Only ``hookimpl`` is imported at module level: discovery stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clawbot import hookimpl

if TYPE_CHECKING:
    from clawbot_subagents.runs import SubagentRegistry


class SubagentsPlugin:
    def __init__(self) -> None:
        #: the registry of the kernel that called last: ``clawbot_session_stop`` gets no ctx
        self._registry: SubagentRegistry | None = None

    def registry(self, ctx: Any = None) -> SubagentRegistry:
        """The sub-agents of the kernel ``ctx`` comes from (``None``: the last one started)."""
        from clawbot_subagents.runs import SubagentRegistry

        if ctx is not None:
            registry = ctx.state.get("registry")
            if registry is None:  # the first hook of this kernel: its runs start empty
                registry = ctx.state["registry"] = SubagentRegistry(ctx.state_dir, ctx.clawbot.subagents)
                ctx.on_close(registry.aclose)
            self._registry = registry
        if self._registry is None:
            raise RuntimeError("the sub-agents plugin was asked for its runs before a kernel started")
        return self._registry

    @hookimpl
    def clawbot_tools(self, ctx):
        from clawbot_subagents.tool import make_tool

        self.registry(ctx)
        return [make_tool()]

    @hookimpl
    def clawbot_capabilities(self, ctx):
        from clawbot import Capability

        from clawbot_subagents.api import Subagents

        return [Capability(Subagents, self.registry(ctx).for_scope)]

    @hookimpl
    def clawbot_chat_commands(self, ctx):
        from clawbot_subagents.command import subagents_command

        return [subagents_command(self.registry(ctx))]

    @hookimpl
    def clawbot_services(self, ctx):
        from clawbot_subagents.cut_off import CutOffAnnouncer

        return [CutOffAnnouncer(self.registry(ctx))]

    @hookimpl
    def clawbot_session_stop(self, event):
        if self._registry is None:
            return None
        stopped = self._registry.stop_all(event.session_key)
        return f"{stopped} sub-agent(s) stopped too." if stopped else None


plugin = SubagentsPlugin()
