"""clawbot-bootstrap-extra-files: more workspace files in the system prompt.

Keep this file free of imports: clawbot imports ``clawbot_bootstrap_extra_files.plugin``
(and so this package) whenever it discovers plugins.
"""

__version__ = "0.1.0"
