"""`python -m mcp_resolve`: the `mcp-resolve` command line (see `mcp_resolve.cli`)."""

from .cli import main

raise SystemExit(main())
