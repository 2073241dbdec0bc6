"""The fixtures of clawbot's test kit (``clawbot_home``, ``workspace``, ``make_kernel``,
``fake_channel``, ``fake_llm`` ...), loaded for this plugin's tests.

Installing clawbot adds no fixtures to anybody's test run; a plugin asks for them here.
"""

pytest_plugins = ["clawbot.testing.pytest_plugin"]
