"""The MCP server: AI agents (Claude Desktop, Claude Code, Cursor, ...) recall and store memories."""
