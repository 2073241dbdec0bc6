"""clawbot-webchat: a chat page and its WebSocket, served by the gateway's control API."""
