"""What other programs speak to: ``serve``, the MCP server, and the host tool tables.

Modules and their public names:

- ``host_tools``: HostTool, capture, tool_output
- ``loaded``: MAX_LOADED, text_key, real_path, host_loaded
- ``mcp``: SERVER_NAME, INSTALL_HINT, INSTRUCTIONS, EXPLAIN_PATH_DESCRIPTION,
  LIST_RULES_DESCRIPTION, ToolSpec, TOOLS, ToolAnswer, UnknownTool, RulesTools, run,
  build_server, server_entry
- ``serve``: PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR,
  MAX_LINE, MAX_DEPTH, RequestError, Server, serve_stream, run
"""
