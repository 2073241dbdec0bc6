"""The exec approval notice names every grant the command would hold: where it runs, each
extra tree it may write (``sandbox_write``) or read (``sandbox_read``, the agent's skills),
and whether it reaches the network. Nothing it may do is left out, nothing it may not is claimed.

The table builds the grant lines as ``exec`` does and reads them in the kernel's own notice
(what the owner sees before answering); the last test goes through the real exec tool with
``sandbox_write`` and ``sandbox_read`` configured.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import clawbot_tools.plugin
import pytest
from clawbot.testing import APPROVAL_NOTICE_MAX_DETAILS as MAX_DETAILS
from clawbot.testing import approval_notice
from clawbot.types import ApprovalRequest, ApprovalTicket, InboundMessage, ToolCall, TurnTrust
from clawbot_tools.runtime.approval_flow import Reach, always_covers, grant_lines
from clawbot_tools.runtime.bound_files import Binding
from clawbot_tools.runtime.context import Job
from clawbot_tools.runtime.exec_policy import Verdict
from clawbot_tools.runtime.executables import Program
from clawbot_tools.runtime.sandbox import choose

from .test_exec_approvals import RecordingPort

WRITES = ("/srv/data", "/home/alice/proj")
READS = ("/opt/toolchain",)
OUTSIDE = "Runs: OUTSIDE the sandbox: it can read and change all your files, and use the network."
UNCONFINED = "Runs: without a sandbox (none is usable here): it can read and change all your files, and use the network."

ONLY_THE_WORKSPACE = "Writes: only the workspace and its temp dir."
GRANTS = [
    # (job fields, mechanism, reach, the lines that state its grants)
    ({}, "bwrap", Reach(), ["Runs: inside the sandbox (bwrap), with no network.", ONLY_THE_WORKSPACE]),
    ({"network": True}, "bwrap", Reach(), ["Runs: inside the sandbox (bwrap), with network access.", ONLY_THE_WORKSPACE]),
    (
        {},
        "landlock",
        Reach(writes=WRITES[:1]),
        ["Runs: inside the sandbox (landlock), with no network.", "Writes: the workspace, its temp dir and /srv/data (sandbox_write)."],
    ),
    (
        {"network": True},
        "bwrap",
        Reach(writes=WRITES),
        ["Runs: inside the sandbox (bwrap), with network access.", "Writes: the workspace, its temp dir and /srv/data, /home/alice/proj (sandbox_write)."],
    ),
    (
        {},
        "bwrap",
        Reach(reads=READS),
        ["Runs: inside the sandbox (bwrap), with no network.", ONLY_THE_WORKSPACE, "Reads also: /opt/toolchain (sandbox_read)."],
    ),
    (
        {"readable": ("/skills/weather",), "added_env": {"LANG": "C"}, "interactive": True},
        "bwrap",
        Reach(reads=READS, writes=WRITES[:1]),
        [
            "Runs: inside the sandbox (bwrap), with no network.",
            "Writes: the workspace, its temp dir and /srv/data (sandbox_write).",
            "Reads also: /opt/toolchain (sandbox_read) and the agent's skills.",
            "Directory: /ws",
            "Environment it adds: LANG=C",
            "Input: interactive: each text the agent sends to it asks you again.",
        ],
    ),
    ({}, "off", Reach(writes=WRITES), [UNCONFINED]),
    ({"network": True}, "off", Reach(), [UNCONFINED]),
    ({"sandboxed": False}, "bwrap", Reach(writes=WRITES), [OUTSIDE]),
    ({"sandboxed": False, "network": True}, "landlock", Reach(), [OUTSIDE]),
]


def _job(**fields: Any) -> Job:
    return Job("make build", "/ws", {}, 60.0, "agent:main:main", "main", workspace="/ws", **fields)


def _request(job: Job, mechanism: str, reach: Reach, verdict: Verdict) -> ApprovalRequest:
    return ApprovalRequest(
        "exec",
        job.command,
        "make is not in the exec allowlist",
        lambda decision: None,
        allow_always=True,
        details=grant_lines(job, mechanism, reach),
        always_covers=always_covers(verdict, mechanism, Binding()),
    )


TICKET = ApprovalTicket("ab12cd", datetime.now(UTC) + timedelta(days=1), "/approve ab12cd allow-once")


def _notice(job: Job, mechanism: str, reach: Reach, verdict: Verdict) -> str:
    return approval_notice(TICKET, _request(job, mechanism, reach, verdict))


@pytest.mark.parametrize(("fields", "mechanism", "reach", "stated"), GRANTS)
def test_the_notice_states_each_grant(fields: dict[str, Any], mechanism: str, reach: Reach, stated: list[str]) -> None:
    job = _job(**fields)
    request = _request(job, mechanism, reach, Verdict("ask", ("make is not in the exec allowlist",), always="command"))
    notice = approval_notice(TICKET, request)
    if len(request.details) <= MAX_DETAILS:  # every grant on screen, none behind "show"
        lines = notice.splitlines()
        assert "characters are hidden" not in notice and "more lines" not in notice
    else:  # more than a screen holds: the rest is counted, and it cannot be allowed before `show` shows it all
        assert "more lines about what it grants are not shown" in notice and "it cannot be allowed unseen" in notice
        lines = approval_notice(TICKET, request, full=True).splitlines()
        notice = "\n".join(lines)
    assert all(line in lines for line in stated), notice
    confined = job.sandboxed and mechanism != "off"
    assert ("use the network" in notice or "with network access" in notice) is (job.network or not confined)
    if confined:  # each tree it may write or read beyond the workspace is named, and nothing claims "only" then
        assert all(tree in notice for tree in (*reach.writes, *reach.reads))
        assert (ONLY_THE_WORKSPACE in lines) is (not reach.writes)
    else:
        assert "Writes: only" not in notice


@pytest.mark.parametrize("reach", [Reach(), Reach(reads=READS, writes=WRITES)])
def test_allow_always_for_programs_points_at_what_they_may_write_and_gives_no_network(reach: Reach) -> None:
    verdict = Verdict("ask", ("make is not in the exec allowlist",), always="programs", programs=(Program("/usr/bin/make", "make"),))
    notice = _notice(_job(network=True), "bwrap", reach, verdict)
    lines = notice.splitlines()
    # a remembered program never gets the network this one run asked for; "as above" is the Writes and Reads lines
    assert "allow-always also remembers: /usr/bin/make with any arguments, inside the sandbox (bwrap) as above, without network" in lines
    writes = [line for line in lines if line.startswith("Writes: ")]
    assert len(writes) == 1 and all(tree in writes[0] for tree in reach.writes)
    assert "characters are hidden" not in notice


async def test_the_real_exec_tool_names_sandbox_write_and_sandbox_read(make_kernel: Any, tmp_path: Path) -> None:
    mechanism = choose("auto").mechanism.name
    ws, data, tools = tmp_path / "ws", tmp_path / "data", tmp_path / "tools"
    for folder in (ws, data, tools):
        folder.mkdir()
    config = f'[plugins.tools.exec]\nsandbox_write = ["{data}"]\nsandbox_read = ["{tools}"]\n'
    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin}, config=config, env={"PATH": os.environ.get("PATH", os.defpath)})
    agents = kernel.agents(chat=RecordingPort())  # a chat the approval can be asked in
    origin = InboundMessage(channel="fake", peer_id="alice", text="build it", from_owner=True)
    services = agents.tool_services("main", "agent:main:main", origin=origin, trust=TurnTrust.OWNER)
    try:
        assert f"write only the workspace, a private temp dir ($TMPDIR) and {data}," in kernel.tools["exec"].description  # what the model is told
        result = await kernel.tools["exec"].handler(ToolCall("c1", "exec", {"command": "mkdir out"}, "main", "agent:main:main", ws, services))
        assert result.details["status"] == "approval-pending"
        [(ticket, request)] = agents.approvals.requests("agent:main:main")
        notice = approval_notice(ticket, request)
        if "characters are hidden" in notice:  # long paths: the whole notice is one `show` away, and needed before allowing
            notice = approval_notice(ticket, request, full=True)
    finally:
        await agents.aclose()
        await kernel.aclose()
    if mechanism == "off":
        assert UNCONFINED in notice.splitlines()
    else:
        lines = notice.splitlines()
        assert f"Runs: inside the sandbox ({mechanism}), with no network." in lines, notice
        assert f"Writes: the workspace, its temp dir and {os.path.realpath(data)} (sandbox_write)." in lines
        assert any(line.startswith(f"Reads also: {os.path.realpath(tools)} (sandbox_read)") for line in lines), notice
