"""What ``pi-rules trust`` and ``pi-rules untrust`` print (docs/trust.md)."""

from __future__ import annotations

import argparse
import os
import sys

from rules_core.safe import safe_json, safe_line

from rules_hosts.session.trust import TrustStoreError, read_store, store_path, trust, untrust


def run_trust(args: argparse.Namespace, cwd: str) -> int:
    if args.list:
        if args.directory is not None:
            return _usage("trust --list takes no DIR")
        return _listing(args.json)
    return _change(args, cwd, add=True)


def run_untrust(args: argparse.Namespace, cwd: str) -> int:
    return _change(args, cwd, add=False)


def _change(args: argparse.Namespace, cwd: str, *, add: bool) -> int:
    directory = os.path.join(cwd, args.directory) if args.directory is not None else cwd
    if add and not os.path.isdir(directory):
        return _usage(f"{directory} is not a directory; name a folder of the project to trust")
    try:
        root, changed = (trust if add else untrust)(directory, os.environ)
        roots = read_store(os.environ)
    except TrustStoreError as exc:
        print(f"pi-rules: {safe_line(str(exc))}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(safe_json({"root": root, "changed": changed, "trusted": list(roots)}) + "\n")
    elif add:
        print(f"trusted: {safe_line(root)}" if changed else f"already trusted: {safe_line(root)}")
        if changed:
            print("hosts started with --trust-store (the Pi extension) now read its project rules")
    else:
        print(f"untrusted: {safe_line(root)}" if changed else f"was not trusted: {safe_line(root)}")
    return 0


def _listing(as_json: bool) -> int:
    try:
        roots = read_store(os.environ)
    except TrustStoreError as exc:
        print(f"pi-rules: {safe_line(str(exc))}", file=sys.stderr)
        return 1
    if as_json:
        sys.stdout.write(safe_json({"trusted": list(roots)}) + "\n")
        return 0
    for root in roots:
        print(safe_line(root))
    if not roots:
        where = store_path(os.environ) or "the trust store"
        print(f"no trusted projects ({safe_line(where)}); trust one with: pi-rules trust DIR", file=sys.stderr)
    return 0


def _usage(message: str) -> int:
    print(f"pi-rules: {safe_line(message)}", file=sys.stderr)
    return 2
