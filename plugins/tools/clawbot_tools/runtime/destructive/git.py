"""git's rules: its global options skipped (``-C``, ``-c``, ``--config-env`` ...), aliases
defined on the command line, the destructive subcommands, and the forms that run
configured commands (``-c``, ``submodule foreach``, ``bisect run``, ``rebase -x``).
"""

from __future__ import annotations

from collections.abc import Sequence

from clawbot_tools.runtime.destructive.options import _has_long, _options

# git's own options before the subcommand (git.c compares them exactly: no abbreviations)
GIT_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--config-env",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--attr-source",
    }
)
GIT_ALIAS = "git alias defined on the command line (what it runs is unknown)"


def _git_runs_commands(args: list[str]) -> bool:
    """``git -c ...`` (a configured pager, editor, hook or alias runs), ``submodule foreach`` ..."""
    sub, rest, config = _git_split(args)
    if config:
        return True
    flags, operands = _options(rest)
    return (
        (sub == "submodule" and "foreach" in operands)
        or (sub == "bisect" and "run" in operands)
        or (sub == "rebase" and ("x" in flags or _has_long(flags, "--exec")))
    )


def _git_split(args: list[str]) -> tuple[str | None, list[str], list[str]]:
    """(subcommand, its arguments, config given with -c / --config-env) of git's ``args``."""
    config: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option, eq, value = args[i].partition("=")
        if option in GIT_VALUE_OPTIONS and not eq:
            if option in ("-c", "--config-env") and i + 1 < len(args):
                config.append(args[i + 1])
            i += 2
            continue
        if option == "--config-env":
            config.append(value)
        i += 1
    if i >= len(args):
        return None, [], config
    return args[i], args[i + 1 :], config


def _git_labels(args: list[str]) -> list[str]:
    sub, rest, config = _git_split(args)
    labels: list[str] = []
    if any(item.lower().startswith("alias.") for item in config):
        labels.append(GIT_ALIAS)
    if sub is not None:
        labels.extend(_git_sub_labels(sub, rest))
    return labels


def _git_sub_labels(sub: str, rest: Sequence[str]) -> list[str]:
    """The destructive forms of ``git SUB REST``."""
    if sub == "push":
        flags, operands = _options(rest, values="o")
        if (
            flags & {"f", "d"}
            or _has_long(flags, "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "--prune")
            or any(o.startswith(("+", ":")) and len(o) > 1 for o in operands)
        ):
            return ["git push --force (or --delete / --mirror / :branch / +ref)"]
    elif sub == "reset":
        flags, _ = _options(rest)
        if _has_long(flags, "--hard"):
            return ["git reset --hard"]
    elif sub == "clean":
        flags, _ = _options(rest, values="e")
        if not ("n" in flags or _has_long(flags, "--dry-run")):
            return ["git clean -f (deletes untracked files)"]
    elif sub == "branch":
        flags, _ = _options(rest, values="u")
        deletes = "d" in flags or _has_long(flags, "--delete")
        if "D" in flags or (deletes and ("f" in flags or _has_long(flags, "--force"))):
            return ["git branch -D"]
    elif sub in ("checkout", "restore", "switch"):
        flags, operands = _options(rest, values="bBo")
        if sub != "restore" and ("f" in flags or _has_long(flags, "--force", "--discard-changes")):
            return [f"git {sub} --force (discards changes)"]
        staged_only = sub == "restore" and (flags & {"S"} or _has_long(flags, "--staged")) and not (flags & {"W"} or _has_long(flags, "--worktree"))
        if sub != "switch" and not staged_only and any(o in (".", ":/", "*", "./") for o in operands):
            return [f"git {sub} . (discards all changes)"]
    elif sub == "stash":
        _, operands = _options(rest)
        if operands[:1] in (["drop"], ["clear"]):
            return [f"git stash {operands[0]}"]
    elif sub == "reflog":
        _, operands = _options(rest)
        if operands[:1] in (["expire"], ["delete"]):
            return [f"git reflog {operands[0]}"]
    elif sub == "gc":
        for arg in rest:
            option, _, value = arg.partition("=")
            if len(option) >= 4 and "--prune".startswith(option) and value in ("now", "all"):
                return ["git gc --prune=now"]
    elif sub == "prune":
        flags, _ = _options(rest)
        if not ("n" in flags or _has_long(flags, "--dry-run")):
            return ["git prune"]
    elif sub in ("filter-branch", "filter-repo"):
        return [f"git {sub} (rewrites history)"]
    elif sub == "update-ref":
        flags, _ = _options(rest)
        if "d" in flags:
            return ["git update-ref -d"]
    elif sub == "config":
        flags, operands = _options(rest)
        reads = flags & {"l", "e"} or _has_long(flags, "--get", "--get-all", "--get-regexp", "--list", "--unset", "--show-origin")
        if not reads and any(o.lower().startswith("alias.") for o in operands) and len(operands) >= 2:
            return ["git config alias.* (an alias may run anything)"]
    return []
