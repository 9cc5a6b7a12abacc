"""The session runtime: the session, its file, results and stream, mid-run attachment,
deliver-once, the facts builder and the trust store.

Modules and their public names:

- ``attach``: SEPARATOR, ATTACH_ENV, ATTACHING_TOOLS, Batch, attach_enabled, newly_activated,
  remaining_budget, plan_batch, append_block
- ``deliver_once``: PromptUpdate, prompt_update
- ``facts``: MAX_TOKENS_ENV, LIVE, host_facts, max_tokens, budget, resolved_budget, strings
- ``file``: MAX_ENTRY_LINE, MAX_PERSISTED_PATH, EntryRefused, encode_line, path_refusal,
  entry_refusal, encode_entry, parse_entries, iter_entries, read_entries, append_line,
  open_for_append, exclusive, SessionFile
- ``results``: SessionState, Capture, ToolResultEffect, Turn, ToolDefinition, plain_json
- ``runtime``: TOUCHED_CUSTOM_TYPE, SWITCH_REASONS, USAGE, F, touched_entry,
  touched_from_entries, Session
- ``stream``: STREAM_OFF_TYPE, MAX_JOURNAL, SessionStream, switch_off_record, read_switch_offs,
  read_records
- ``trust``: STORE_NAME, STORE_VERSION, MAX_STORE_BYTES, MAX_ENTRIES, OWN_MARKERS,
  TrustStoreError, TrustDecision, trust_hint, store_path, project_root, read_store, trust,
  untrust, trust_mode, trust_decision, project_markers, has_project_rules
"""
