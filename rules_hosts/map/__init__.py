"""``pi-rules map``: the data, the tree and the HTML page.

Modules and their public names:

- ``command``: DEFAULT_PAGE, run
- ``data``: MAX_FOLDERS, MAX_DEPTH, MAX_FILES_PER_FOLDER, DEAD_CODE, MapRule, FolderRule,
  Folder, RepoMap, build_map, map_json, map_json_text
- ``html``: render_html, page_data
- ``page``: STYLE, SCRIPT
- ``tree``: MARKERS, LEGEND, render_tree
"""
