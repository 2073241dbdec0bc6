"""Entry point of the tool-audit plugin: ``clawbot_tool_audit.plugin:plugin``.

An example of the two tool lifecycle hooks:

* ``clawbot_before_tool_call`` refuses calls that match a ``[[plugins.tool-audit.block]]``
  rule; the model receives the reason as the call's error result and the tool never runs.
  Blocked calls get an audit line too (``outcome: "blocked"``).
* ``clawbot_after_tool_call`` appends one JSON line per finished call: time, agent, session,
  tool, arguments (secret-looking keys redacted), whether it failed, how long it took and
  how much text it returned (never the text itself).

Lifecycle hooks receive only their event, so the plugin keeps its settings from a
registration hook: ``clawbot_tools(ctx)`` is called once per kernel start with the validated
``[plugins.tool-audit]`` table and the state directory; the plugin offers no tools and
answers it with an empty list. The plugin is an object rather than a module so each kernel
(each test) can hold its own instance; the entry point's instance serves the process's kernel.

Only ``hookimpl`` is imported at module level: discovery stays cheap.
"""

from __future__ import annotations

from clawbot import hookimpl


class ToolAuditPlugin:
    def __init__(self) -> None:
        self.auditor = None  # set by clawbot_tools when a kernel starts

    @hookimpl
    def clawbot_config_schema(self):
        from clawbot_tool_audit.config import ToolAuditConfig

        return ToolAuditConfig

    @hookimpl
    def clawbot_tools(self, ctx):
        from clawbot_tool_audit.audit import Auditor
        from clawbot_tool_audit.config import ToolAuditConfig

        self.auditor = Auditor(ctx.settings or ToolAuditConfig(), ctx.state_dir, ctx.env)
        return []

    @hookimpl
    def clawbot_before_tool_call(self, event):
        from clawbot import ToolCallDecision

        auditor = self.auditor
        if auditor is None:
            return None
        rule = auditor.blocking_rule(event.tool_name, event.arguments)
        if rule is None:
            return None
        reason = rule.reason(event.tool_name)
        try:
            auditor.record(
                agent=event.agent_id,
                session=event.session_key,
                call_id=event.call_id,
                tool=event.tool_name,
                arguments=event.arguments,
                outcome="blocked",
                is_error=True,
                reason=reason,
            )
        except OSError:
            # The call stays blocked either way; a log that cannot be written must not turn
            # the rule's reason into a generic "plugin failed" one.
            import logging

            logging.getLogger(__name__).warning("tool-audit: cannot write %s", auditor.log.path, exc_info=True)
        return ToolCallDecision.block(reason)

    @hookimpl
    def clawbot_after_tool_call(self, event):
        from clawbot_tool_audit.audit import result_chars

        auditor = self.auditor
        if auditor is None:
            return
        call = event.call
        # An OSError here is recorded by the kernel as this plugin's hook failure
        # (shown by `clawbot plugins list` and `clawbot doctor`); the turn goes on.
        auditor.record(
            agent=call.agent_id,
            session=call.session_key,
            call_id=call.call_id,
            tool=call.tool_name,
            arguments=call.arguments,
            outcome="error" if event.result.is_error else "ok",
            is_error=event.result.is_error,
            duration_ms=event.duration_ms,
            result_chars=result_chars(event.result),
        )


plugin = ToolAuditPlugin()
