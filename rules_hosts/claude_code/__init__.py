"""Claude Code, one home: its tool table (``tools``), the plugin (``plugin``) and the
hook adapter (``hook``, loaded only when ``pi-rules hook claude-code`` runs)."""
