"""Host adapters: where the engine meets a real MCP server framework."""
