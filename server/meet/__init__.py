"""Meeting an opponent (contract section 11): seeks, challenges, who is online.

- :mod:`.seeks`: ``seek``, ``accept_seek``, ``cancel_seek``; the pool is the database's
  (:mod:`tablas.server.store.seeks`), shared by every node, so a seek is paired once.
- :mod:`.challenges`: ``challenge`` and its answers; each challenge is owned, in memory, by
  the node its challenger sent it from, and reaches the challenged player's connections on
  every node through :class:`~.reach.Reach`.
- :mod:`.tables`: a pair that met gets its room, seats drawn, the game started, and each
  player ``paired`` and the room's snapshot, on whatever node they are connected to.
- :mod:`.reach`: the port to connections and players on every node; :class:`~.reach.LocalReach`
  on one server, :class:`tablas.server.cluster.reach.SharedReach` on a cluster's node.
- :mod:`.stats`: ``GET /api/stats``.
"""
