"""Let the tests import ``clawbot_tool_audit`` from a checkout without installing it.

The plugin is an opt-in example, so clawbot's development environment does not install it
(installed, it would audit every tool call of every test run). Installed (``pip install -e
.``), the same package is imported either way.
"""

import sys
from pathlib import Path

PROJECT = str(Path(__file__).resolve().parents[1])
if PROJECT not in sys.path:
    sys.path.insert(0, PROJECT)
