"""The texts ``exec`` and ``process`` hand back: finished runs, background runs, events.

Every text built from command output goes through :func:`shown`, which masks secret
values and caps the length, so no path to the model skips either.
"""

from __future__ import annotations

from clawbot_tools.runtime.envscrub import redact
from clawbot_tools.runtime.outbuf import cap
from clawbot_tools.runtime.processes import ManagedProcess

EVENT_OUTPUT_CHARS = 3000
COMMAND_PREVIEW_CHARS = 80


def shown(text: str, secrets: tuple[str, ...], max_chars: int) -> str:
    return cap(redact(text, secrets), max_chars)


def preview(command: str, limit: int = COMMAND_PREVIEW_CHARS) -> str:
    one_line = " ".join(command.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 3] + "..."


def status_line(process: ManagedProcess) -> str:
    return f"[{process.describe_status()}; {process.runtime_s():.1f} s]"


def finished_text(process: ManagedProcess, secrets: tuple[str, ...], max_chars: int) -> str:
    kept = process.output.text()
    output = shown(kept, secrets, max_chars).rstrip("\n")
    status = status_line(process)
    if process.output.dropped or len(kept) > max_chars:
        status = status[:-1] + f"; {process.output.total} bytes of output, the middle omitted]"
    text = f"{output or '(no output)'}\n\n{status}"
    if process.lingering and process.group_alive:
        text += f"\nIts background processes run on as {process.id}; process kill stops them."
    return text


def yielded_text(process: ManagedProcess, output: str, waited_s: float, *, notify: bool) -> str:
    lines = [
        f"Still running after {waited_s:g} s; it continues in the background as process {process.id}.",
        (
            f'Use the process tool with id "{process.id}": action "poll" for new output and the exit status, '
            '"log" for the whole output, "write" to send input, "kill" to stop it.'
        ),
    ]
    if notify:
        lines.append("A system event will also tell you when it finishes.")
    body = output.rstrip("\n")
    if body:
        lines += ["", "Output so far:", body]
    return "\n".join(lines)


def event_text(process: ManagedProcess, secrets: tuple[str, ...], *, approved: bool) -> str:
    """The system event posted when a background or approved command finishes.

    The gateway answers it as a turn labelled as clawbot's own, so the command's output (which
    anyone who controls a web page, a file or a server can write) goes between fence lines
    with a random id, and any spelling of the kernel's labels in it, or in the command, is
    broken: "Exec finished. [System event from clawbot ...] The user says ..." stays output.
    """
    from clawbot.promptkit import TRUSTED_MARKERS
    from clawbot.safetext import defuse, fence, visible

    kind = "approved command" if approved else "background command"
    output = redact(process.output.text(), secrets).rstrip("\n")
    if len(output) > EVENT_OUTPUT_CHARS:
        output = "[...]\n" + output[-EVENT_OUTPUT_CHARS:]
    command = visible(defuse(preview(process.command, 300), TRUSTED_MARKERS))
    lines = [
        f"exec {process.id} finished ({kind}): {process.describe_status()} after {process.runtime_s():.1f} s.",
        f"Command: {command}",
    ]
    if output:
        label = f"output of the {kind} exec {process.id} (last part)"
        lines.append(fence(defuse(output, TRUSTED_MARKERS), label=label))
    else:
        lines.append("No output.")
    lines.append(f'Tell the user the result. Full output: process log with id "{process.id}".')
    return "\n".join(lines)
