"""Commands that destroy data or the machine: they ask the user in every mode, always.

A best-effort safety net, not a sandbox. It judges the line with the same rules in three
views: ``rm -r`` / ``rm /``, ``mkfs`` / ``mke2fs`` / ``mkswap`` / ``wipefs``, ``dd of=``,
``shred``, ``blkdiscard``, ``fdisk`` / ``sfdisk`` / ``parted`` on a device, shutdown and
reboot (``shutdown``, ``init 0``, ``systemctl poweroff``, ``systemctl isolate
rescue.target`` ...), ``chmod``/``chown -R /``, ``find / -delete``, ``tee``/``cp`` to a disk
device, and git's ``push --force`` / ``--mirror`` / ``--delete`` / ``:branch`` / ``+ref``,
``reset --hard``, ``clean`` (unless ``-n``), ``branch -D``, ``checkout -f`` / ``checkout .``,
``restore .``, ``stash drop|clear``, ``reflog expire``, ``gc --prune=now``, ``prune``,
``filter-branch``, ``update-ref -d`` and aliases defined on the command line (``git -c
alias.x=...``, ``--config-env``, ``GIT_CONFIG_*``: what they run is unknown). Long options
count by any unambiguous-looking prefix of three or more characters (``rm --r``, ``git reset
--har``, ``git push --force-w``, as GNU getopt and git accept them); git's global options
(``-C``, ``-c``, ``--git-dir`` ...) are skipped in both their ``--opt value`` and
``--opt=value`` forms; ``busybox APPLET`` / ``toybox APPLET`` are judged as the applet.

The views:

* the analysed commands (so quoting tricks such as ``r\\m -rf`` or ``sh -c 'rm -rf x'``
  are seen), with bash brace expansions (``rm {-rf,x}``) expanded;
* a rough split of the raw text at every place a command can start (``;``, ``|``, ``&``,
  newlines, parentheses, backticks, ``$(``, keywords and ``sudo``/``xargs``/``exec``-like
  prefixes), so ``echo $(rm -rf x)``, which the analysis cannot take apart, is seen too;
* when the line runs a program that is not a fixed word -- a program name holding ``$``,
  a substitution or a glob (``$c -rf x``, ``$(echo rm) -rf x``, ``/bin/r? -rf x``), a
  wrapper with such a word (``sudo $c``), ``eval``, ``source``, ``trap``, ``xargs``,
  ``watch``, ``ssh``, an interpreter (``python -c``, ``perl -e``, ``awk``), a shell that
  reads its script from its input or a file or gets a ``-c`` script that is not a fixed
  word (``echo 'rm -rf x' | sh``, ``sh -c "$x"``, ``bash -c $'...'``), or git running
  configured commands (``-c``, ``submodule foreach``, ``bisect run``, ``rebase -x``) --
  a token scan of the whole raw text: quotes and backslashes dropped, ``$'...'`` and
  ``\\xHH`` / octal escapes decoded, split at whitespace, shell operators and ``$ { } , =``.
  Destructive words found anywhere in it (``rm`` plus a recursive flag or ``/``, ``mkfs``,
  ``dd`` plus ``of=``, ``reboot``, ``git`` plus ``push -f`` ...) ask, labelled "hidden behind
  a dynamic command". This view is coarse on purpose (``c=cp; $c -r a b; rm x`` asks): a
  false alarm costs one question, a miss costs data. Without a dynamic program there is
  no scan, so ``echo rm -rf`` still runs.

Plus raw-text checks: a fork bomb, ``curl ... | sh``, decoded text piped into a shell
(``base64 -d | sh``), ``> /dev/sdX`` and ``> /proc/sysrq-trigger``. Every check is linear in
the length of the line (no regular expression here can backtrack catastrophically; windows
and counts are bounded; the policy also refuses to analyse lines over 8,000 characters). A
false alarm only costs one question to the user; such commands are never offered "allow
always". Not covered: what scripts, aliases and functions defined elsewhere run, text
decoded by other means (``base64 -d`` into a variable), and programs whose destructive
use is their normal one (``truncate``, ``mv``, ``rsync --delete``, ``rm`` of plain files).

Modules: ``rules`` and ``git`` (what each program does), ``rough``, ``scan`` and ``raw`` (the
views of the raw text), ``dynamic`` (when the scan counts), ``options`` and ``braces``
(reading words).
"""

from __future__ import annotations

from collections.abc import Iterable

from clawbot_tools.runtime.destructive.dynamic import _dynamic
from clawbot_tools.runtime.destructive.raw import _raw_labels
from clawbot_tools.runtime.destructive.rough import _rough_commands
from clawbot_tools.runtime.destructive.rules import DISK_DEVICE, _argv_labels, labels_of
from clawbot_tools.runtime.destructive.scan import _MAY_HIDE, _squash, scan, scan_tokens
from clawbot_tools.runtime.shell_analysis import Analysis

__all__ = ["destructive", "scan_tokens"]

HIDDEN = " (hidden behind a dynamic command)"


def destructive(command: str, analysis: Analysis) -> list[str]:
    """Labels of the destructive patterns in ``command`` (empty: none)."""
    found: list[str] = []

    def add(labels: Iterable[str]) -> None:
        for label in labels:
            if label not in found:
                found.append(label)

    for command_ in analysis.commands:
        add(_argv_labels(command_))
    for redirect in analysis.redirects:
        target = redirect.target
        if target is not None and ">" in redirect.op:
            if DISK_DEVICE.match(target.value):
                add(["writes to a disk device"])
            elif target.value.startswith("/proc/sysrq-trigger"):
                add(["shutdown / reboot"])
    for name, args in _rough_commands(command):
        add(labels_of(name, args, args))
    add(_raw_labels(command))
    unquoted = command.replace("'", "").replace('"', "")
    if "\\" in command or _MAY_HIDE.search(unquoted) or _MAY_HIDE.search(_squash(unquoted)):
        hidden = [label for label in scan(command) if label not in found]
        if hidden and _dynamic(command, analysis):  # the (costlier) look at the programs comes last
            add(label + HIDDEN for label in hidden)
    return found
