"""Destructive patterns ask in every mode, ``full`` included (patterns once missed).

Each line of ``DESTRUCTIVE`` ran unasked in ``full`` mode before the fix (several destroyed
data when executed): GNU long-option abbreviations (``rm --r``), git's global options and
configuration tricks (``git -c alias.p='push -f' p``), programs that are not fixed words
(``$(echo rm) -rf``, ``eval``, ``... | sh``, ``bash -c $'...'``) and programs the check did
not know (``mke2fs``, ``systemctl isolate rescue.target``, ``busybox rm -rf``). ``ORDINARY``
lines must still run. The check must stay linear in the length of the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot_tools.runtime.destructive import scan_tokens

from .exec_support import verdict


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


DESTRUCTIVE = [
    # GNU long-option abbreviations
    "rm --r DIR",
    "rm --re DIR",
    "rm --recu DIR",
    "rm -f --recursiv DIR",
    "chmod --recu 777 /",
    "chown --rec me:me /",
    "chgrp --recursive staff /",
    "git reset --har HEAD~1",
    "git reset --ha HEAD~1",
    "git reset --h HEAD~1",
    "git clean --forc",
    "git clean --f -d",
    "git push --force-w",
    "git push --force-with origin main",
    "git push --force-if origin main",
    "git push --fo origin main",
    "git push --mir origin",
    # git's global options and configuration
    "git -c clean.requireForce=false clean",
    "git clean",
    "git clean -d -x",
    "git clean -e n",
    "git clean -fen",
    "git clean --exclude=-n -f",
    "git --config-env core.x=HOME push -f origin HEAD:main",
    "git --config-env=core.x=HOME push -f origin HEAD:main",
    "git -C repo --git-dir .git --work-tree . push -f",
    "git --git-dir=.git --work-tree=. reset --hard",
    "git --namespace ns --exec-path=/usr/lib/git-core push --force",
    "git --exec-path push --force",
    "git --super-prefix x/ --no-pager -p --bare push -f",
    "git -P --no-replace-objects --literal-pathspecs reset --hard",
    "git -c alias.p='push -f' p",
    "git -c Alias.p='!rm -rf DIR' p",
    "git --config-env alias.p=X p",
    "git --config-env=alias.p=X p",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0='push -f' git p",
    "git config alias.p 'push -f'",
    "git -c core.pager='rm -rf DIR' log",
    "git push --mirror",
    "git push --mirror origin",
    "git push --delete origin old",
    "git push -d origin old",
    "git push origin --del old",
    "git push origin :old",
    "git push origin +main",
    "git push origin +HEAD:main",
    "git push --prune origin 'refs/heads/*:refs/heads/*'",
    "git branch -D feature",
    "git branch -d -f feature",
    "git branch --delete --force feature",
    "git stash drop",
    "git stash clear",
    "git reflog expire --expire=now --all",
    "git gc --prune=now",
    "git gc --prune=all",
    "git prune",
    "git filter-branch --tree-filter 'rm -f x' HEAD",
    "git filter-repo --invert-paths --path x",
    "git update-ref -d refs/heads/main",
    "git checkout -f main",
    "git checkout --force main",
    "git checkout -- .",
    "git checkout .",
    "git restore .",
    "git switch --discard-changes main",
    "git submodule foreach 'rm -rf build'",
    "git rebase -x 'rm -rf DIR' HEAD~3",
    # dynamic programs
    "$(echo rm) -rf DIR",
    "`echo rm` -rf DIR",
    "c=rm; $c -rf DIR",
    "c=rm\n$c -rf DIR",
    "${c:-rm} -rf DIR",
    "$c rm -rf DIR",
    "eval 'rm -rf DIR'",
    'eval "r"m -rf DIR',
    "eval r\\\\m -rf DIR",
    "echo 'rm -rf DIR' | sh",
    "echo 'rm -rf DIR' | bash -s",
    "echo 'rm -rf DIR' | env sh",
    "printf 'rm -rf DIR' | sudo sh",
    "echo 'rm -rf DIR' > x.sh; sh x.sh",
    "x='rm -rf ..'; sh -c \"$x\"",
    "bash -c $'rm -rf ..'",
    "bash -c $'\\x72\\x6d -rf ..'",
    "bash -c $'\\162\\155 -rf ..'",
    "$(printf '\\x72\\x6d') -rf DIR",
    "sh -c 'c=rm; $c -rf DIR'",
    "sh -c 'sh -c \"$0 -rf DIR\"' rm",
    "x=-rf; c=rm; $c $x DIR",
    "IFS=,; c=rm,-rf,DIR; $c",
    "c=rm${IFS}-rf${IFS}DIR; $c",
    "r${x}m -rf DIR",
    "r$@m -rf DIR",
    "$SHELL -c 'rm -rf DIR'",
    "sh <<EOF\nrm -rf DIR\nEOF",
    "setsid rm -rf DIR",
    "flock /tmp/lock rm -rf DIR",
    "exec sh -c 'rm -rf DIR'",
    "busybox sh -c 'rm -rf DIR'",
    "git -c core.sshCommand='rm -rf ~' fetch",
    "c=rm; sudo $c -rf DIR",
    "c=rm; env $c -rf DIR",
    "c=rm; nice -n 5 $c -rf DIR",
    "c=rm; find . -exec $c -rf {} +",
    "/bin/r? -rf DIR",
    "/bin/[r]m -rf DIR",
    "x=/bin/r?; $x -rf DIR",
    "echo DIR | xargs rm -r",
    "printf -- '-rf\\0DIR' | xargs -0 rm",
    "trap 'rm -rf DIR' EXIT",
    "watch -n1 rm -rf DIR",
    "ssh host rm -rf DIR",
    "python3 -c \"import os; os.system('rm -rf DIR')\"",
    "perl -e 'system(\"rm -rf DIR\")'",
    "awk 'BEGIN { system(\"rm -rf DIR\") }'",
    "c=mkfs.ext4; $c /dev/sdb1",
    "c=dd; $c if=/dev/zero of=/dev/sda",
    "$c reboot",
    "eval shutdown -h now",
    "eval 'init 0'",
    "c=telinit; $c 6",
    "c=systemctl; $c poweroff",
    "c=git; $c status; $c push -f",
    "c=git; $c reset --hard",
    "eval git clean -dx",
    "$(echo git) push --mirror",
    "eval shred secrets.txt",
    "eval 'chmod -R 777 /'",
    "eval wipefs -a /dev/sdb",
    "echo cm0gLXJmIERJUgo= | base64 -d | sh",
    # programs the check did not know
    "mke2fs /dev/sdb1",
    "mke2fs -t ext4 /dev/sdb1",
    "mkswap /dev/sdb2",
    "wipefs -a /dev/sdb",
    "wipefs -a",
    "blkdiscard /dev/nvme0n1",
    "fdisk /dev/sda",
    "sfdisk /dev/sda < layout",
    "parted /dev/sda mklabel gpt",
    "parted -s /dev/sda rm 1",
    "sgdisk -Z /dev/sda",
    "systemctl poweroff",
    "systemctl reboot",
    "systemctl halt",
    "systemctl kexec",
    "systemctl suspend",
    "systemctl hibernate",
    "systemctl -i reboot",
    "systemctl start poweroff.target",
    "systemctl start reboot.target",
    "systemctl isolate halt.target",
    "systemctl isolate rescue.target",
    "systemctl isolate emergency.target",
    "systemctl isolate rescue",
    "telinit 0",
    "telinit 6",
    "init 0",
    "init 6",
    "/sbin/init 6",
    "echo b > /proc/sysrq-trigger",
    "busybox rm -rf x",
    "busybox mkfs.ext2 /dev/sdb1",
    "busybox reboot",
    "toybox rm -r x",
    "find / -delete",
    "find ~ -delete",
    "find / -name x -delete",
    "find . -delete",
    "find build -type f -delete",
    "find / -exec rm -rf {} +",
    "find / -exec rm {} \\;",
    "find . -exec rm -rf {} +",
    "echo x > /dev/sda",
    "cat a.img > /dev/nvme0n1",
    ": >/dev/sda",
    "cat a.img | tee /dev/sda",
    "cp a.img /dev/sdb",
    "chown -R me /",
    "chown -R me:me /",
    "chmod -R 000 ~",
    "dd if=/dev/zero of=/dev/sda bs=1M",
]


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_destructive_lines_ask_in_full_mode(command: str, world: Path) -> None:
    found = verdict(command, world, security="full")
    assert found.action == "ask" and found.destructive, (command, found)
    assert not found.allow_always


@pytest.mark.parametrize("command", DESTRUCTIVE[:40])
def test_destructive_lines_ask_in_allowlist_mode_too(command: str, world: Path) -> None:
    found = verdict(command, world, allowlist=["rm", "git", "chmod", "chown", "chgrp"])
    assert found.action == "ask" and found.destructive and not found.allow_always, (command, found)


ORDINARY = [
    "rm file.txt",
    "rm -f a b",
    "rm -f -- -r",
    "rm -i notes.txt",
    "git push origin main",
    "git push -u origin feature",
    "git push --follow-tags origin main",
    "git push --dry-run origin main",
    "git reset HEAD~1",
    "git reset --soft HEAD~1",
    "git reset --mixed",
    "git clean -n",
    "git clean -nd",
    "git clean --dry-run -d",
    "git clean --dry -d",
    "git -c user.name=x commit -m hi",
    "git -C repo status",
    "git --no-pager log --oneline",
    "git branch -d merged",
    "git branch feature",
    "git checkout main",
    "git checkout -b feature",
    "git restore --staged .",
    "git stash",
    "git stash pop",
    "git gc",
    "git config user.name x",
    "git config --get alias.p",
    "chmod -R u+w ./build",
    "chmod 644 file",
    "chown me file",
    "find . -name '*.pyc'",
    "find . -name '*.pyc' -delete",
    "find / -name passwd",
    "echo rm -rf is dangerous",
    "echo 'rm -rf /' > notes.txt",
    "grep -r 'rm -rf' .",
    "systemctl status nginx",
    "systemctl restart nginx",
    "systemctl start nginx.service",
    "dd if=a.img bs=1M count=1",
    "fdisk -l",
    "fdisk -l /dev/sda",
    "sfdisk -l /dev/sda",
    "parted /dev/sda print",
    "init --version",
    "ls $HOME",
    "echo $HOME",
    'cat "$FILE"',
    'for f in *.txt; do wc -l "$f"; done',
    "sh -c 'echo hi'",
    "bash -c 'ls -la'",
    "python3 -c 'print(1)'",
    "$EDITOR notes.txt",
    "curl -s https://example.com -o page.html",
    "echo aGkK | base64 -d",
    "tee out.txt",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_lines_still_run_in_full_mode(command: str, world: Path) -> None:
    found = verdict(command, world, security="full")
    assert found.action == "run" and not found.destructive, (command, found)


def test_hidden_destructive_commands_are_labelled_as_such(world: Path) -> None:
    found = verdict("c=rm; $c -rf DIR", world, security="full")
    assert any("hidden behind a dynamic command" in reason for reason in found.reasons), found.reasons


def test_the_scan_decodes_ansi_c_quotes_and_escapes() -> None:
    tokens = scan_tokens("bash -c $'\\x72\\x6d -rf ..'; eval r\\m; x=\"r\"'m'")
    assert tokens.count("rm") >= 3 and "-rf" in tokens


ADVERSARIAL = [
    "$c " + "rm -rf " * 800,
    "$c " + "git push " * 600,
    "eval " + "x" * 5000,
    "$c " + "$'" * 2500,
    "$c " + "\\x72" * 1250,
    "$c " + "/bin/r?" * 700,
    "$c " + " ".join(f"/b{i}/r?" for i in range(700)),
    "$c " + "init " * 1000,
    "$c " + "systemctl start " * 350,
    "$c " + "git reset " * 500,
    "$c " + "'\"" * 2500,
    "$c " + "{a,b}" * 1000,
    "$c " + "--r" * 1600,
    "sh -c '" * 700,
    "x=$(" * 1600,
    "$c " + "a=" * 2500,
    "$c " + "${" * 2500,
    "$c " + "-" * 5000,
    "f(){ " * 1000,
    "curl x | " * 550,
]


def test_the_check_stays_linear_on_adversarial_lines(world: Path) -> None:
    lines = [(line * 2)[:5000] for line in ADVERSARIAL] * 5
    assert len(lines) == 100 and all(len(line) == 5000 for line in lines)
    # Linear: well under a second in all; quadratic: minutes, past the suite's per-test timeout.
    assert all(verdict(line, world, security="full") is not None for line in lines)
