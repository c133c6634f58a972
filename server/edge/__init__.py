"""The network edge: the WebSocket (:mod:`tablas.server.edge.websocket`) and HTTP
(:mod:`tablas.server.edge.http`) on one port. It parses, checks who may come in and how fast, and
hands each message over; it decides nothing about rooms or games."""

from tablas.server.edge.http import Http
from tablas.server.edge.websocket import Edge

__all__ = ["Edge", "Http"]
