"""What to run after ``clawbot plugins new``: commands that work with the clawbot at hand.

clawbot-kernel is not on a package index, so a new plugin cannot simply ``pip install`` its
dependencies from one. The commands use the clawbot that created the plugin instead:

- **installed clawbot** (a wheel in some environment): the plugin is installed, editable, into
  that same environment (where clawbot will also load it) and its tests run on that
  environment's interpreter;
- **source checkout** (the kernel is the checkout's ``kernel/`` directory): the checkout's own
  environment is left alone (``uv sync`` would remove an extra package, and the checkout's
  tests would load the plugin); ``uv run`` builds a throwaway environment from the checkout's
  kernel and the plugin instead.

The source tree of a checkout is also where a new plugin is not created unless asked.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from pathlib import Path

import attrs
import clawbot


@attrs.frozen
class Install:
    """How the running clawbot is installed."""

    python: str  # the interpreter clawbot runs on (not resolved: a venv's python is a symlink)
    kernel_checkout: Path | None  # the checkout's kernel/ directory, or None for an installed wheel

    @property
    def source_tree(self) -> Path | None:
        """The checkout's root (the workspace holding kernel/), or None when installed."""
        if self.kernel_checkout is None:
            return None
        root = self.kernel_checkout.parent
        return root if (root / "pyproject.toml").is_file() else self.kernel_checkout


def current_install() -> Install:
    """The running clawbot: from a checkout when its package sits in a project with a pyproject."""
    kernel_dir = Path(clawbot.__file__).resolve().parents[1]
    checkout = kernel_dir if (kernel_dir / "pyproject.toml").is_file() else None
    return Install(python=sys.executable, kernel_checkout=checkout)


def _q(value: str | Path) -> str:
    return shlex.quote(str(value))


def next_steps(target: Path, install: Install, plugin: str) -> tuple[str, list[str], str]:
    """A heading, the shell commands that install and test the plugin at ``target``, a closing line."""
    python = _q(install.python)
    if install.kernel_checkout is not None:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        return (
            f"test it against this source checkout's kernel ({install.kernel_checkout}):",
            [
                f"cd {_q(target)}",
                f"uv run --no-project --python {version} --with-editable {_q(install.kernel_checkout)} --with-editable '.[test]' pytest",
            ],
            f"To load it in clawbot, install it into the environment clawbot runs from (see {target / 'README.md'}).",
        )
    if importlib.util.find_spec("pip") is not None:
        installer = f"{python} -m pip install -e '.[test]'"
    elif shutil.which("uv"):
        installer = f"uv pip install --python {python} -e '.[test]'"
    else:
        installer = f"{python} -m ensurepip && {python} -m pip install -e '.[test]'"
    return (
        f"install it (editable) where clawbot runs ({sys.prefix}) and test it:",
        [f"cd {_q(target)}", installer, f"{python} -m pytest"],
        f"Then `clawbot plugins list` shows {plugin}; `clawbot doctor` reports a plugin that fails to load.",
    )
