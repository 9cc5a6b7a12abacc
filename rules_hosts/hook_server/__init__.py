"""The resident hook server (``python -m rules_hosts.hook_server.server``); its stdlib-only
client is the CLI's front door (``rules_hosts/cli/hook_client.py``).

Modules and their public names:

- ``server``: IDLE_ENV, IDLE_SECONDS, code_fingerprint, Server, run
"""
