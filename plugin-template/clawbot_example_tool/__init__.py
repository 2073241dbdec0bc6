"""The example_tool clawbot plugin.

Keep this file empty of imports: clawbot imports ``clawbot_example_tool.plugin`` (and thus
this package) for every command, so anything imported here slows every ``clawbot`` run.
"""

__version__ = "0.1.0"
