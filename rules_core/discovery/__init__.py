"""The tree a discovery reads: the walk and its listing, containment, reading, ignore files
and wildmatch, git, importer selection, and the in-memory and persistent caches with their
files. The discovery pass itself is the engine's.

Modules and their public names:

- ``cache``: MAX_SCAN_ROOTS, evict_oldest, add_bounded, FileCache, ScanCache
- ``cache_files``: MAX_FILE_BYTES, MAX_FILES, read_json, encode, own_directory,
  write_atomically, prune
- ``containment``: MAX_SYMLINKS, Unresolved, Containment
- ``git``: REPOSITORY_ENV, absolute_path, git_executable, git_environment, git_output, run_git,
  current_branch, find_git_root
- ``ignore``: MAX_IGNORE_BYTES, MAX_WILDCARD_LINES, MAX_WILDCARD_BYTES, read_ignore_file,
  IgnoreStack
- ``imports``: IMPORT_ENV, select_importers
- ``listing``: NEVER_SCANNED, MAX_LISTING_FAILURES, MAX_FILES_PER_ROOT, list_rule_files,
  ListingCache
- ``observe``: Observation, signature, depends_on, claim, unstable, observing
- ``persistent``: CACHE_ENV, MAX_ENTRIES, MAX_PATHS, MAX_STORES, RACY_NS, now_ns, cache_directory,
  Persistent, Store, sources_with_kept_tree
- ``reading``: MAX_RULE_BYTES, BROKEN_LINK, NOT_REGULAR, Repaired, read_rule_text, read_at_most,
  file_signature, describe_os_error, not_regular
- ``tree``: MAX_DEPTH, folders_owning, folders_with_hidden, folders_holding,
  skipped_ignore_files, walked_tree, restore_tree
"""
