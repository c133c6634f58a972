"""The network edge: the WebSocket (:mod:`server.edge.websocket`) and HTTP
(:mod:`server.edge.http`) on one port. It parses, checks who may come in and how fast, and
hands each message over; it decides nothing about rooms or games."""

from server.edge.http import Http
from server.edge.websocket import Edge

__all__ = ["Edge", "Http"]
