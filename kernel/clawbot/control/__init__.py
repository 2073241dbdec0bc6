"""How a running gateway's control API is found and reached: the files and the stdlib client.

The API itself is served by a plugin (``clawbot-control``, in the default set); what its
server and its clients share is a convention on the state dir, public so either side may be
replaced: ``<state dir>/gateway/token`` (:mod:`clawbot.control.token`) and
``<state dir>/gateway/endpoint.json`` (:mod:`clawbot.control.endpoint`). ``clawbot agent`` and
``clawbot status`` reach the gateway with :mod:`clawbot.control.client`, which imports only
the standard library: no plugin is loaded to find out whether a gateway runs. The endpoints
are described in docs/control-api.md.
"""
