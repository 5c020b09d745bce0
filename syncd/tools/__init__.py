"""MCP tools (one module per upstream), their error mapping and the server that serves them."""
