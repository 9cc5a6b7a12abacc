"""Lint: checking rules and settings with the lint hooks.

Modules and their public names:

- ``check``: lint, lint_context, with_warnings
"""
