"""clawbot-setup: the commands that set clawbot up and check it (``onboard``, ``doctor``,
``plugins new``, the gateway's service files: ``gateway install``/``uninstall``/``status``)."""
