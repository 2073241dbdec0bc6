"""What the automation plugin registers: the ``[cron]`` table, the cron tool, the scheduler
service and the CronJobs capability, all through the public hooks."""

from __future__ import annotations

import clawbot_automation.plugin
import pytest
from clawbot.testing import ConfigError
from clawbot_automation.config import CronConfig
from clawbot_automation.cron_access import CronJobs


async def test_the_cron_tool_changes_state_so_its_calls_never_overlap(make_kernel) -> None:
    kernel = await make_kernel(plugins={"automation": clawbot_automation.plugin})
    try:
        [tool] = [tool for tool in kernel.tools if tool.name == "cron"]
        assert tool.concurrent is False and tool.group == "automation"
    finally:
        await kernel.aclose()


async def test_the_cron_table_keeps_its_name_and_off_means_no_scheduler(make_kernel) -> None:
    kernel = await make_kernel(plugins={"automation": clawbot_automation.plugin}, config='[cron]\nenabled = false\ncatch_up = "all"\n')
    try:
        assert kernel.plugin_context("automation").section("cron") == CronConfig(enabled=False, catch_up="all")
        assert "cron" not in kernel.services
        assert [capability.kind for capability in kernel.capabilities] == [CronJobs]
    finally:
        await kernel.aclose()


async def test_a_bad_cron_value_is_named_by_its_key(make_kernel) -> None:
    with pytest.raises(ConfigError, match="cron.history"):
        await make_kernel(plugins={"automation": clawbot_automation.plugin}, config="[cron]\nhistory = 0\n")
