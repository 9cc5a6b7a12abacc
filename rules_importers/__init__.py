"""Importers for other agents' rule formats (Copilot, Claude, Cursor, …).

Each importer is its own plugin module; they arrive with the importers issue.
"""
