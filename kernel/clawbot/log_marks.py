"""Marks a log record carries to say where it is shown.

``extra=FILE_ONLY`` keeps a record in the log file, off the terminal (unless ``--verbose``):
for the details of a failure the user is told about in clawbot's own words, such as a
model call's retries and its traceback, when the chat (or the command) already says in one
line that the model could not be reached.
"""

from __future__ import annotations

FILE_ONLY = {"file_only": True}
