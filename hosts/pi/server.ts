// The `pi-rules serve` child process of the Pi extension (index.ts): JSON lines over its
// stdio (docs/protocol.md), one answer per request, and the trust arguments it starts with.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

const COMMAND = process.env.PI_RULES_COMMAND ?? "pi-rules";
const CALL_TIMEOUT_MS = 15_000; // a server slower than this is taken for hung: rules off

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type Response = { id?: unknown; result?: unknown; error?: { message?: unknown } };

type TrustStatus = { trusted: boolean; root: string; decided_by: string; project_rules: boolean; hint: string };

// Pi decides trust from 0.79.1 on (ctx.isProjectTrusted(), RULE-SPEC §1's gate); 0.73.1 has
// no decision of its own, so there the user's trust store decides.
type TrustAware = { isProjectTrusted?: () => boolean };
export const hostTrust = (ctx: ExtensionContext): boolean | undefined => {
  const decide = (ctx as ExtensionContext & TrustAware).isProjectTrusted;
  try {
    return typeof decide === "function" ? Boolean(decide.call(ctx)) : undefined;
  } catch {
    return false; // Pi has a decision but could not give it: read no project rules
  }
};
// Pi's decision when it gives one; else the user's own trust store (`pi-rules trust`).
const trustArgs = (trusted: boolean | undefined): string[] =>
  trusted === undefined ? ["--trust-store"] : trusted ? [] : ["--untrusted"];

export class RulesServer {
  private child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private failed: Error | undefined;

  constructor(cwd: string, trusted: boolean | undefined) {
    const args = ["--cwd", cwd, ...trustArgs(trusted), "serve"];
    this.child = spawn(COMMAND, args, { stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout }).on("line", (line) => this.answer(line));
    this.child.stderr.on("data", () => {}); // diagnostics only; never block on a full pipe
    this.child.on("error", (error) => this.fail(error)); // e.g. `pi-rules` not on PATH
    this.child.stdin.on("error", (error) => this.fail(error)); // EPIPE: never an uncaught error
    this.child.on("exit", () => this.fail(new Error("pi-rules serve exited")));
  }

  // Requests are answered in order, one line each; ids only pair them up. A dead or hung
  // server rejects (at once, or after CALL_TIMEOUT_MS): no event waits for it for ever.
  call<T>(method: string, params: { [key: string]: unknown } = {}): Promise<T> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`pi-rules serve: no answer to ${method} within ${CALL_TIMEOUT_MS} ms`));
        this.child.kill(); // our own child, hung: rules stay off until the next session
      }, CALL_TIMEOUT_MS);
      timer.unref();
      const settle = () => clearTimeout(timer);
      this.pending.set(id, {
        resolve: (value) => (settle(), resolve(value as T)),
        reject: (error) => (settle(), reject(error)),
      });
      this.child.stdin.write(JSON.stringify({ id, method, params }) + "\n");
    });
  }

  private fail(error: Error): void {
    this.failed ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }

  close(): void {
    this.child.stdin.end(); // EOF: the server exits 0
  }

  private answer(line: string): void {
    let response: Response;
    try {
      response = JSON.parse(line) as Response;
    } catch {
      return;
    }
    if (typeof response !== "object" || response === null || typeof response.id !== "number") return;
    const waiter = this.pending.get(response.id);
    if (!waiter) return;
    this.pending.delete(response.id);
    if (response.error) waiter.reject(new Error(`pi-rules: ${String(response.error.message)}`));
    else waiter.resolve(response.result);
  }
}

// The one line a user sees when the project has rules but is not trusted, else undefined.
// A server without trust_status (an older pi-rules) means: nothing to tell.
export const untrustedNotice = async (server: RulesServer): Promise<string | undefined> => {
  try {
    const status = await server.call<TrustStatus>("trust_status");
    if (status.trusted || !status.project_rules) return undefined;
    if (status.decided_by === "host") {
      // Pi decided (ctx.isProjectTrusted): the fix is Pi's, not pi-rules' trust store.
      return "pi-rules: this project has rules but Pi does not trust it; run /trust in Pi (or start pi with --approve)";
    }
    return `pi-rules: this project has rules but is not trusted; run: ${status.hint}`;
  } catch {
    return undefined;
  }
};
