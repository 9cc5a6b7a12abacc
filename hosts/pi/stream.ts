// Stream rules for the Pi extension (index.ts): the model's streamed output goes to the
// server's stream watcher (docs/stream.md) without ever holding up Pi's event queue.

import type { Json, RulesServer } from "./server.ts";

const MAX_BATCH = 65_536; // characters per stream_delta: far below the server's 1 MiB line limit
const DRAIN_TIMEOUT_MS = 5_000; // longest wait for the watcher before a tool runs

export type Source = "text" | "thinking" | "tool";
export type StreamResult = { fired: Json[]; interrupt: boolean; block: string };
// `run` is the agent run (agent_start .. agent_end) the output belongs to.
export type StreamOp =
  | { kind: "turn"; run: number }
  | { kind: "delta"; run: number; source: Source; text: string; tool: string | null; callId: string | null; path: string | null }
  | { kind: "end"; run: number; source: Source; tool: string | null; callId: string | null; path: string | null };

const sameStream = (a: StreamOp, b: StreamOp): boolean =>
  a.kind !== "turn" && b.kind !== "turn" && a.run === b.run && a.source === b.source && a.tool === b.tool && a.callId === b.callId;

// The file path a tool call names, once its partially parsed arguments hold one.
export const pathOf = (args: unknown): string | null => {
  const path = (args as { path?: unknown } | null | undefined)?.path;
  return typeof path === "string" && path ? path : null;
};

// Cut text into pieces of at most MAX_BATCH characters, never inside a surrogate pair.
const pieces = (text: string): string[] => {
  const out: string[] = [];
  let start = 0;
  while (text.length - start > MAX_BATCH) {
    let end = start + MAX_BATCH;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1;
    out.push(text.slice(start, end));
    start = end;
  }
  out.push(text.slice(start));
  return out;
};

// Forwards stream events to the server with at most one request in flight. Deltas that
// arrive while a request is in flight are coalesced into the queued delta of the same
// stream (same source, tool and call id), so a burst of N small deltas costs about two
// round trips instead of N, and no text is lost: the watcher's matches do not depend on
// how the text is split (docs/stream.md). Pi's own event queue never waits for it; the
// places that must see every answer first (a tool call about to run, a new agent run)
// call drain().
export class StreamPump {
  private queue: StreamOp[] = [];
  private busy = false;
  private idle: Promise<void> = Promise.resolve();
  private watching = true; // false while stream_turn says no stream rule is armed
  private off = false; // after a failure: stream rules stay off until the next session

  constructor(
    private server: () => RulesServer | undefined,
    private onResult: (op: StreamOp, result: StreamResult) => void,
  ) {}

  push(op: StreamOp): void {
    if (this.off) return;
    if (op.kind === "delta") {
      if (!op.text) return;
      const last = this.queue[this.queue.length - 1];
      if (last?.kind === "delta" && sameStream(last, op) && last.text.length + op.text.length <= MAX_BATCH) {
        last.text += op.text; // not sent yet: merged, in order
        last.path = op.path ?? last.path;
      } else {
        for (const text of pieces(op.text)) this.queue.push({ ...op, text });
      }
    } else {
      this.queue.push(op);
    }
    if (!this.busy) this.idle = this.run();
  }

  // Resolves once every queued op is answered (or after DRAIN_TIMEOUT_MS; a watcher that
  // slow is switched off for the session rather than stall every tool call). Never rejects.
  async drain(): Promise<void> {
    if (!this.busy) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), DRAIN_TIMEOUT_MS);
    });
    const outcome = await Promise.race([this.idle.then(() => "done" as const), late]);
    clearTimeout(timer);
    if (outcome === "late") this.stop(`pi-rules: no stream answer within ${DRAIN_TIMEOUT_MS} ms; stream rules off`);
  }

  stop(reason?: string): void {
    if (reason && !this.off) console.error(reason);
    this.off = true;
    this.queue = [];
  }

  private async run(): Promise<void> {
    this.busy = true; // set before the first await: push() never starts a second loop
    try {
      while (this.queue.length > 0 && !this.off) {
        const op = this.queue.shift()!;
        const server = this.server();
        if (!server) continue;
        if (op.kind === "turn") {
          const turn = await server.call<{ watching: string[] }>("stream_turn");
          this.watching = (turn?.watching?.length ?? 1) > 0;
          continue;
        }
        if (!this.watching) continue; // nothing can fire this turn: skip the round trip
        const target = { source: op.source, tool: op.tool, call_id: op.callId, path: op.path };
        const result =
          op.kind === "delta"
            ? await server.call<StreamResult>("stream_delta", { ...target, text: op.text })
            : await server.call<StreamResult>("stream_end", target);
        if (result && !this.off) this.onResult(op, result); // stopped meanwhile: a stale answer
      }
    } catch (error) {
      // A server without stream methods, or a dead one: say it once, keep the agent going.
      this.stop(`${String(error)} (stream rules off for this session)`);
    } finally {
      this.busy = false;
    }
  }
}
