"""What the configuration asks for that no installed plugin serves.

The control API (the clawbot-control plugin's channel ``api``) and the heartbeats and cron
jobs (the clawbot-automation plugin's services ``heartbeat`` and ``cron``) are plugins' work:
with the plugin blocked (``plugins.deny``, ``CLAWBOT_DISABLE_PLUGINS``) or not installed, a
gateway runs without them and says nothing unless asked. ``clawbot run`` and ``clawbot doctor``
ask here.
"""

from __future__ import annotations

from typing import Any

from clawbot.config.automation_schema import heartbeat_minutes
from clawbot.doctor_findings import Finding
from clawbot.gateway.runner import enabled_channels

#: the channel that serves the control API
API_CHANNEL = "api"
CONTROL_API_OFF = "the control API is off: no installed plugin serves it (clawbot-control is blocked or not installed)"
HEARTBEATS_NOT_RUN = "no plugin runs heartbeats"


def control_api_unserved(kernel: Any) -> bool:
    """``gateway.control_api`` is on but no enabled channel serves it."""
    return bool(kernel.config.gateway.control_api) and API_CHANNEL not in {channel.name for channel in enabled_channels(kernel)}


def heartbeats_unrun(kernel: Any) -> list[str]:
    """The agents with a heartbeat cadence when no service named ``heartbeat`` runs them."""
    if kernel.services.get("heartbeat") is not None:
        return []
    agents = kernel.config.agent_ids() or [kernel.config.default_agent_id()]
    return [agent_id for agent_id in agents if heartbeat_minutes(kernel.config, agent_id) > 0]


def check_unserved(kernel: Any) -> list[Finding]:
    """A warning for the control API and each automation the configuration turns on that no plugin serves."""
    findings = []
    if control_api_unserved(kernel):
        findings.append(
            Finding(
                "warn",
                "control",
                f"gateway.control_api = true but {CONTROL_API_OFF}: `clawbot status` and `clawbot agent` cannot reach a running gateway",
                "install or unblock clawbot-control (plugins.deny, CLAWBOT_DISABLE_PLUGINS), or set gateway.control_api = false",
            )
        )
    if agents := heartbeats_unrun(kernel):
        findings.append(
            Finding(
                "warn",
                "automation",
                f"heartbeats are configured ({', '.join(agents)}) but {HEARTBEATS_NOT_RUN}: none will run",
                "install or unblock clawbot-automation, or set agents.defaults.heartbeat.every_minutes = 0",
            )
        )
    if "cron" in kernel.config.unread and kernel.services.get("cron") is None:
        findings.append(
            Finding(
                "warn",
                "automation",
                "[cron] is configured but no plugin runs cron jobs: none will run",
                "install or unblock clawbot-automation (plugins.deny, CLAWBOT_DISABLE_PLUGINS), or remove the [cron] table",
            )
        )
    return findings
