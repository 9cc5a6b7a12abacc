"""pi-rules' built-in plugins: each module is one named plugin (see rules_core.plugins.manager)."""
