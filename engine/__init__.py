"""Tablas' engine: the rules of every game behind one protocol, and the search over them.

Pure computation: nothing here touches the network, the disk or the clock unless it is passed
in, so the server, the CLI and the tests drive the same code.
"""
