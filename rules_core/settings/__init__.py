"""Settings: loading the files, parsing their values, applying them to a discovery
(plugin blocks, importer selection, warning filters), and the one value a call reads.

Modules and their public names:

- ``apply``: RULE_URL, importer_selection, import_chosen, disabled_reason, plugin_blocks,
  required_errors, host_warnings, with_settings, project_bound
- ``load``: PROJECT_FILE, MAX_SETTINGS_BYTES, MAX_CACHED_FILES, Value, FileState, Settings,
  filter_warnings, env_value, env_items, import_value, user_settings_path, SettingsCache,
  read_settings_text
- ``resolved``: Resolved
- ``parse``: PLUGIN, SCALAR_KEYS, LIST_KEYS, KEYS, OVERFLOWS, TRUST_MODES, SettingsFile,
  parse_settings, key_lines, hint
"""
