"""The MCP server: the catalogue of the served slices' tools, stdio, notifications, the change feed.

:mod:`~syncd.server.app` builds the server from the tool specs it is handed; :mod:`~syncd.server.stdio`
is the stdio transport, :mod:`~syncd.server.notify` the notifications, :mod:`~syncd.server.changes`
the change feed's own tool and resource.
"""
