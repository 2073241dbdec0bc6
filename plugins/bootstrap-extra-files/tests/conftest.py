"""Let the tests import ``clawbot_bootstrap_extra_files`` from a checkout without installing it.

The plugin is an opt-in example, so clawbot's development environment does not install it:
installed, its entry point would load into every test that boots a kernel from the installed
plugins (the CLI tests), and change what their prompts contain as soon as a config names it.
Installed (``pip install -e .``), the same package is imported either way.
"""

import sys
from pathlib import Path

PROJECT = str(Path(__file__).resolve().parents[1])
if PROJECT not in sys.path:
    sys.path.insert(0, PROJECT)
