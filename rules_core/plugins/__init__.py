"""The plugin framework: the hook specifications, the plugin manager, the typed hook calls
and the entry-point scan.

Modules and their public names:

- ``entry_points``: MAX_ENTRY_POINTS, KeptDistribution, KeptEntryPoint, entry_points,
  installed_signature
- ``hooks``: Hooks
- ``hookspecs``: PROJECT_NAME, pi_rules_sources, pi_rules_importers, pi_rules_hosts,
  pi_rules_parse, pi_rules_schema_keys, pi_rules_intent, pi_rules_exclude, pi_rules_match,
  pi_rules_stream_spec, pi_rules_scan, pi_rules_estimate_tokens, pi_rules_render,
  pi_rules_tool_output, pi_rules_capture_paths, pi_rules_output_formats, pi_rules_lint,
  pi_rules_cli_commands
- ``manager``: ENTRY_POINT_GROUP, PACK_GROUP, DISABLE_ENV, DEBUG_ENV, PluginInfo, FAULT,
  RulesPluginManager, PluginLoadError, blocked_from_env, make_plugin_manager, list_plugins
"""
