"""Everyday work still works inside every mechanism: shells, coreutils, git, python3, temp
files, the trees the user opens, and the network when it is allowed."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from clawbot_tools.runtime.sandbox import SandboxPolicy

from .sandbox_variants import ALL, CONFINING
from .sandbox_world import PATH, PYTHON, run_sandboxed


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, temp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    temp.mkdir(mode=0o700)
    return ws, temp


def policy_for(dirs: tuple[Path, Path], **fields: object) -> SandboxPolicy:
    return SandboxPolicy(workspace=str(dirs[0]), temp_dir=str(dirs[1]), **fields)


EVERYDAY = {
    "coreutils": (
        "echo hello > a.txt && cat a.txt | tr a-z A-Z && mkdir -p d/e && mv a.txt d/e/ && ls d/e && wc -c < d/e/a.txt && rm -r d",
        "HELLO\na.txt\n6\n",
    ),
    "git": (
        "git init -q && echo x > f && git add f && git -c user.name=T -c user.email=t@example.com commit -qm first "
        "&& echo y >> f && git status --short && git log --oneline | wc -l",
        " M f\n1\n",
    ),
    "python3": (f"{PYTHON} -c 'import json, sys; json.dump({{\"ok\": sys.version_info > (3,)}}, sys.stdout)'", '{"ok": true}'),
    "pipeline-with-temp-file": ('t=$(mktemp) && seq 1 100 > "$t" && sort -rn "$t" | head -1 && rm "$t" && echo clean', "100\nclean\n"),
    "stdin": ("tr a-z A-Z", "PIPED\n"),
    "dev-null-and-friends": ("echo gone > /dev/null && head -c 3 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c", "3\n4\n"),
    "exit-code": ("exit 7", ""),
    "stream-socketpair": (f"{PYTHON} -c 'import socket; a, b = socket.socketpair(); a.sendall(b\"x\"); print(b.recv(1))'", "b'x'\n"),
}


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("case", sorted(EVERYDAY))
def test_everyday_commands_work_inside(dirs, name: str, case: str) -> None:
    line, expected = EVERYDAY[case]
    done = run_sandboxed(name, line, policy_for(dirs), stdin="piped\n" if case == "stdin" else None)
    assert done.stdout == expected
    assert done.returncode == (7 if case == "exit-code" else 0)


@pytest.mark.parametrize("name", ALL)
def test_bash_process_substitution_and_dev_stdout_work(dirs, name: str) -> None:
    done = run_sandboxed(name, "cat <(echo sub) && echo out > /dev/stdout", policy_for(dirs), shell="bash")
    assert (done.returncode, done.stdout) == (0, "sub\nout\n")


@pytest.mark.parametrize("name", ALL)
def test_tmpdir_is_the_private_temp_dir(dirs, name: str) -> None:
    done = run_sandboxed(name, 'echo kept > "$TMPDIR/note" && cat "$TMPDIR/note"', policy_for(dirs))
    assert (done.returncode, done.stdout) == (0, "kept\n")
    assert (dirs[1] / "note").read_text() == "kept\n"


def test_bwrap_shows_the_temp_dir_at_tmp_too(dirs) -> None:
    done = run_sandboxed("bwrap", "echo hard-coded > /tmp/fixed && ls /tmp", policy_for(dirs))
    assert done.returncode == 0, done.stdout
    assert (dirs[1] / "fixed").read_text() == "hard-coded\n"


@pytest.mark.parametrize("name", ALL)
def test_home_keeps_its_real_path_in_the_environment(dirs, name: str, tmp_path: Path) -> None:
    env = {"PATH": PATH, "HOME": str(tmp_path / "home")}
    done = run_sandboxed(name, 'echo "$HOME"', policy_for(dirs), env=env)
    assert done.stdout == f"{tmp_path / 'home'}\n"


@pytest.mark.parametrize("name", ALL)
def test_read_only_trees_are_readable_but_not_writable(dirs, name: str, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings").write_text("value\n")
    done = run_sandboxed(name, f"cat {config}/settings; echo changed > {config}/settings; echo rc=$?", policy_for(dirs, read_only=[str(config)]))
    assert done.stdout.startswith("value\n")
    if name != "off":
        assert done.stdout.rstrip().endswith("rc=2")
        assert (config / "settings").read_text() == "value\n"


@pytest.mark.parametrize("name", ALL)
def test_read_write_trees_are_writable(dirs, name: str, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    done = run_sandboxed(name, f"echo written > {shared}/out && cat {shared}/out", policy_for(dirs, read_write=[str(shared)]))
    assert (done.returncode, done.stdout) == (0, "written\n")


@pytest.mark.parametrize("name", ALL)
def test_the_network_is_reachable_when_the_policy_allows_it(dirs, name: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        done = run_sandboxed(name, f"echo hi > /dev/tcp/127.0.0.1/{port} && echo sent", policy_for(dirs, network=True), shell="bash")
        assert done.stdout == "sent\n", done.stdout
        server.settimeout(5)
        server.accept()[0].close()


@pytest.mark.parametrize("name", CONFINING)
def test_names_outside_are_hidden_exactly_when_the_mechanism_says_so(dirs, name: str, tmp_path: Path) -> None:
    from .sandbox_world import mechanism

    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("key")
    done = run_sandboxed(name, f"test -e {secret} && echo visible || echo hidden", policy_for(dirs))
    assert done.stdout == ("hidden\n" if mechanism(name).hides_names else "visible\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can read /etc/shadow in the first place")
def test_bwrap_hides_root_only_system_files_from_root(dirs) -> None:
    assert os.path.exists("/etc/shadow")
    assert "root:" in run_sandboxed("off", "cat /etc/shadow", policy_for(dirs)).stdout
    done = run_sandboxed("bwrap", "cat /etc/shadow", policy_for(dirs))
    assert "root:" not in done.stdout


VSOCK = f"{PYTHON} -c \"import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('made')\""


@pytest.mark.parametrize("name", ALL)
def test_vsock_sockets_are_refused_inside_every_sandbox(dirs, name: str) -> None:
    """A network namespace does not stop vsock, which reaches a virtual machine's host."""
    if run_sandboxed("off", VSOCK, policy_for(dirs)).stdout.strip() != "made":
        pytest.skip("this kernel has no vsock sockets to refuse")
    done = run_sandboxed(name, VSOCK, policy_for(dirs, network=True))
    assert ("made" in done.stdout) is (name == "off"), done.stdout
