"""fastmcp 4.x: `@resolved` under `@app.tool()`, and the app scope on fastmcp's lifespan.

The public face is `mcp_resolve.fastmcp`.
"""
