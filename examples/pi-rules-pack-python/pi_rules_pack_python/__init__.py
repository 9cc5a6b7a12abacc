"""A pi-rules rule pack: the rule files live in the ``rules`` folder next to this file.

pi-rules never imports this module; the entry point ``pi_rules_pack_python:rules`` names
the folder (docs/packs.md in pi-rules).
"""
