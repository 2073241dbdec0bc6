"""Checks of the raw text: a fork bomb, fetched or decoded text piped into a shell, writes to
a disk device or ``/proc/sysrq-trigger``, git aliases set through ``GIT_CONFIG_*``.
"""

from __future__ import annotations

import bisect
import os
import re

from clawbot_tools.runtime.destructive.git import GIT_ALIAS
from clawbot_tools.runtime.destructive.options import _ASSIGNMENT

_SHELL_NAME = re.compile(r"(?:ba|z|da|k|fi)?sh")
_DISK_REDIRECT = re.compile(r">[ \t]*+/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)")
_SYSRQ = re.compile(r">[ \t]*+/proc/sysrq-trigger")
_COLON_BOMB = re.compile(r":[ \t]*+\([ \t]*+\)[ \t]*+\{")
_FUNCTION = re.compile(r"(?<![\w-])([\w-]++)[ \t]*+\([ \t]*+\)[ \t]*+\{")
_SELF_PIPE = re.compile(r"(?<![\w-])([\w-]++)[ \t]*+\|(?=[ \t]*+([\w-]++))")
_SH_OF_CURL = re.compile(r"(?<![\w-])(?:ba|z|da)?sh[ \t]++<\([ \t]*+(?:curl|wget)\b")
_GIT_CONFIG_ALIAS = re.compile(r"GIT_CONFIG_(?:KEY_\d++|PARAMETERS)=\S*?alias\.", re.IGNORECASE)
MAX_FUNCTION_BODY = 2000


def _raw_labels(text: str) -> list[str]:
    labels: list[str] = []
    if _COLON_BOMB.search(text) or _self_piping_function(text):
        labels.append("fork bomb")
    if _DISK_REDIRECT.search(text):
        labels.append("writes to a disk device")
    if _SYSRQ.search(text):
        labels.append("shutdown / reboot")
    fetched, decoded = _piped_to_shell(text)
    if _SH_OF_CURL.search(text) or fetched:
        labels.append("downloads and runs a script (curl/wget | sh)")
    if decoded:
        labels.append("runs decoded text as a script (base64 -d ... | sh)")
    if "GIT_CONFIG" in text.upper() and _GIT_CONFIG_ALIAS.search(text):
        labels.append(GIT_ALIAS)
    return labels


def _self_piping_function(text: str) -> bool:
    """``f() { ... f | f ... }``: a function that pipes into itself (within 2,000 characters)."""
    pipes: dict[str, list[int]] = {}  # name -> where "name | name" starts (in increasing order)
    for match in _SELF_PIPE.finditer(text):
        if match.group(1) == match.group(2):
            pipes.setdefault(match.group(1), []).append(match.start())
    if not pipes:
        return False
    for match in _FUNCTION.finditer(text):
        starts = pipes.get(match.group(1))
        if not starts:
            continue
        end = text.find("}", match.end(), match.end() + MAX_FUNCTION_BODY)
        end = end if end >= 0 else match.end() + MAX_FUNCTION_BODY
        k = bisect.bisect_left(starts, match.end())
        if k < len(starts) and starts[k] < end:
            return True
    return False


_FETCHERS = frozenset({"curl", "wget"})
_DECODERS = frozenset(
    {
        "base64",
        "base32",
        "basenc",
        "xxd",
        "uudecode",
        "openssl",
        "gpg",
        "rev",
        "tr",
        "gunzip",
        "zcat",
        "gzip",
        "bzcat",
        "bunzip2",
        "xzcat",
        "unxz",
        "xz",
        "zstd",
        "zstdcat",
        "unzstd",
        "lzcat",
    }
)


def _piped_to_shell(text: str) -> tuple[bool, bool]:
    """(``curl ... | sh``, ``base64 -d ... | sh``): fetched or decoded text run by a shell."""
    fetched = decoded = False
    for chain in re.split(r"[\n;&]", text):
        source = ""
        for stage in chain.split("|"):
            words = stage.split()
            if source:
                while words and (words[0] in ("sudo", "doas", "env") or _ASSIGNMENT.match(words[0])):
                    words = words[1:]
                if words and _SHELL_NAME.fullmatch(os.path.basename(words[0])):
                    fetched = fetched or source == "fetched"
                    decoded = decoded or source == "decoded"
            bases = {os.path.basename(word) for word in words}
            if bases & _FETCHERS:
                source = "fetched"
            elif bases & _DECODERS and not source:
                source = "decoded"
    return fetched, decoded
