// pi-rules for Pi: forwards Pi's events to `pi-rules serve` (JSON lines over stdio) and
// does what the answers say. All rule logic lives in the Python server; this file only
// translates. Persistence is Pi's own: touched-path entries go into the Pi session with
// pi.appendEntry and come back from ctx.sessionManager.getBranch() on start and /tree.
// The model's streamed output goes to the stream watcher (docs/stream.md) without ever
// holding up Pi's event queue: see StreamPump below. See docs/protocol.md for every method.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";

const SECTION_KEY = "pi-rules-md";
const INTERRUPT_TYPE = "pi-rules-md/interrupt"; // custom message types (shown, sent to the model)
const REMINDER_TYPE = "pi-rules-md/reminder";
const COMMAND = process.env.PI_RULES_COMMAND ?? "pi-rules";
const CALL_TIMEOUT_MS = 15_000; // a server slower than this is taken for hung: rules off
const MAX_BATCH = 65_536; // characters per stream_delta: far below the server's 1 MiB line limit
const DRAIN_TIMEOUT_MS = 5_000; // longest wait for the watcher before a tool runs
const IDLE_POLL_MS = 50; // after an abort: how often to look whether Pi is idle again,
const IDLE_POLLS = 200; // and for how long (10 s) before queueing the interrupt instead

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type Response = { id?: unknown; result?: unknown; error?: { message?: unknown } };

// The answers this file reads (docs/protocol.md); the server's JSON is trusted to match.
type Capture = { entry: { customType: string; data: Json } | null };
type ToolResultEffect = { content: (TextContent | ImageContent)[] | null };
type Turn = { action: "patch" | "remove" | "keep" | "none"; section: string | null; status: string | null };
type Text = { text: string };
type RuleTool = { name: string; description: string; parameters: TSchema };
type TrustStatus = { trusted: boolean; root: string; decided_by: string; project_rules: boolean; hint: string };

// Pi 0.73.1 has no trust decision of its own; a later Pi may add ctx.isProjectTrusted().
type TrustAware = { isProjectTrusted?: () => boolean };
const hostTrust = (ctx: ExtensionContext): boolean | undefined => {
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

class RulesServer {
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

// ---- stream rules -------------------------------------------------------------------

type Source = "text" | "thinking" | "tool";
type StreamResult = { fired: Json[]; interrupt: boolean; block: string };
// `run` is the agent run (agent_start .. agent_end) the output belongs to.
type StreamOp =
  | { kind: "turn"; run: number }
  | { kind: "delta"; run: number; source: Source; text: string; tool: string | null; callId: string | null; path: string | null }
  | { kind: "end"; run: number; source: Source; tool: string | null; callId: string | null; path: string | null };

const sameStream = (a: StreamOp, b: StreamOp): boolean =>
  a.kind !== "turn" && b.kind !== "turn" && a.run === b.run && a.source === b.source && a.tool === b.tool && a.callId === b.callId;

// The file path a tool call names, once its partially parsed arguments hold one.
const pathOf = (args: unknown): string | null => {
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
class StreamPump {
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

// The one line a user sees when the project has rules but is not trusted, else undefined.
// A server without trust_status (an older pi-rules) means: nothing to tell.
const untrustedNotice = async (server: RulesServer): Promise<string | undefined> => {
  try {
    const status = await server.call<TrustStatus>("trust_status");
    if (status.trusted || !status.project_rules) return undefined;
    return `pi-rules: this project has rules but is not trusted; run: ${status.hint}`;
  } catch {
    return undefined;
  }
};

export default function (pi: ExtensionAPI) {
  let server: RulesServer | undefined;
  let section: string | null = null; // the pi-rules-md section, re-applied every turn
  let toolRegistered = false;
  let trustNotice: string | undefined; // set while the project has rules we may not read
  const noticed = new Set<string>(); // project roots already told about, once per Pi process

  // Stream-rule state. An interrupt aborts the run it fired in; its block waits in
  // pendingInterrupt until Pi is idle, then starts a new turn. Reminders wait in
  // `reminders` for the next place Pi lets us add a message before the model's next turn.
  let stream: StreamPump | undefined;
  let run = 0; // agent runs started (agent_start), so late answers can be told apart
  let interruptedRun = -1; // the run an interrupt aborted: its remaining tool calls are blocked
  let pendingInterrupt: string[] | undefined;
  let reminders: string[] = [];
  let streamCtx: ExtensionContext | undefined; // the context of the latest message_update
  // A tool call's id as first seen, per content index of this turn's message: some
  // providers fill the id in after the first delta, and the id keys the watcher's buffer.
  let callIds = new Map<number, string>();
  const callIdOf = (index: number, id: string): string => {
    let key = callIds.get(index);
    if (key === undefined) callIds.set(index, (key = id || `#${index}`));
    return key;
  };

  // A rules failure must never break the agent: log and carry on without rules.
  const safely = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (error) {
      console.error(String(error));
      return undefined;
    }
  };
  const branch = (ctx: ExtensionContext) => ctx.sessionManager.getBranch();
  const add = (list: string[], block: string) => {
    if (!list.includes(block)) list.push(block);
  };
  const send = (customType: string, content: string, options: Parameters<ExtensionAPI["sendMessage"]>[1]) => {
    try {
      pi.sendMessage({ customType, content, display: true }, options);
    } catch (error) {
      console.error(String(error));
    }
  };

  // Abort the model, wait until Pi is idle (ctx.abort() does not wait, and a follow-up
  // queued now would never be read: an aborted run ends without draining Pi's queues),
  // then send the interrupt block, with any reminders, as a message that starts a turn.
  const interrupt = (ctx: ExtensionContext | undefined, blocks: string[]) => {
    try {
      ctx?.abort();
    } catch (error) {
      console.error(String(error));
    }
    let polls = IDLE_POLLS;
    const deliver = () => {
      let idle = true;
      try {
        idle = ctx ? ctx.isIdle() : true;
      } catch {
        idle = true; // a stale context: its session is gone, and with it the run
      }
      if (!idle && polls-- > 0) {
        setTimeout(deliver, IDLE_POLL_MS);
        return;
      }
      if (pendingInterrupt !== blocks) return; // a new session meanwhile: nothing to deliver
      const content = [...blocks, ...reminders].join("\n\n");
      pendingInterrupt = undefined;
      reminders = [];
      // Still busy after 10 s (say, the user started a new prompt): steer it into that run.
      send(INTERRUPT_TYPE, content, idle ? { triggerTurn: true } : { deliverAs: "steer" });
    };
    setTimeout(deliver, 0);
  };

  const onStreamResult = (op: StreamOp, result: StreamResult) => {
    const block = result.block;
    if (!block) return;
    // Interrupt only the run the output came from, and only until its block is sent;
    // anything later is still worth telling the model, as a reminder.
    if (result.interrupt && op.run === run && (interruptedRun !== run || pendingInterrupt)) {
      if (interruptedRun !== run) {
        interruptedRun = run;
        pendingInterrupt = [];
        interrupt(streamCtx, pendingInterrupt);
      }
      add(pendingInterrupt!, block);
    } else {
      add(reminders, block);
    }
  };

  pi.on("session_start", async (event, ctx) => {
    server?.close();
    stream?.stop();
    server = new RulesServer(ctx.cwd, hostTrust(ctx));
    stream = new StreamPump(() => server, onStreamResult);
    section = null;
    pendingInterrupt = undefined;
    reminders = [];
    interruptedRun = -1;
    await safely(() => server!.call("session_start", { reason: event.reason, entries: branch(ctx) }));
    trustNotice = await untrustedNotice(server);
    if (trustNotice && !noticed.has(trustNotice)) {
      noticed.add(trustNotice);
      const notice = trustNotice;
      await safely(async () => ctx.ui.notify(notice, "warning")); // no UI (print mode): a no-op
    }
    if (!toolRegistered) {
      const tool = await safely(() => server!.call<RuleTool>("read_rule_tool"));
      if (tool) {
        toolRegistered = true;
        const readRule: ToolDefinition = {
          name: tool.name,
          label: "Read rule",
          description: tool.description,
          parameters: tool.parameters, // plain JSON Schema, as TypeBox produces
          async execute(_id, params) {
            const answer = await safely(() => server!.call<Text>("read_rule", { args: params }));
            return { content: [{ type: "text", text: answer?.text ?? "Unknown rule: " }], details: {} };
          },
        };
        pi.registerTool(readRule);
      }
    }
  });

  pi.on("session_tree", async (_event, ctx) => {
    await safely(() => server!.call("session_tree", { entries: branch(ctx) }));
  });

  pi.on("session_compact", async () => {
    await safely(() => server!.call("compact"));
  });

  pi.on("session_shutdown", async () => {
    stream?.stop();
    stream = undefined;
    pendingInterrupt = undefined;
    server?.close();
    server = undefined;
  });

  // Pi fires tool_result only for a call that ran: one refused by a tool_call handler (a
  // stream interrupt, or another extension) never gets here, so it is never recorded as
  // touched. tool_execution_start would be too early: Pi sends it before tool_call.
  pi.on("tool_result", async (event) => {
    const capture = await safely(() =>
      server!.call<Capture>("tool_start", { tool: event.toolName, args: event.input }),
    );
    if (capture?.entry) pi.appendEntry(capture.entry.customType, capture.entry.data);
    const effect = await safely(() =>
      server!.call<ToolResultEffect>("tool_result", {
        tool: event.toolName, content: event.content, is_error: event.isError,
      }),
    );
    return effect?.content ? { content: effect.content } : undefined; // undefined: leave it as is
  });

  pi.on("before_agent_start", async (event, ctx) => {
    const turn = await safely(() =>
      server!.call<Turn>("before_agent_start", {
        prompt: event.prompt ?? "",
        model: ctx.model?.id ?? null,
        tools: event.systemPromptOptions?.selectedTools ?? pi.getActiveTools(),
      }),
    );
    if (turn?.action === "patch") section = turn.section;
    else if (turn?.action === "remove") section = null;
    if (ctx.hasUI && turn) ctx.ui.setStatus(SECTION_KEY, turn.status ?? undefined);
    // Reminders the last run left: they go in with this prompt, as a message of their own.
    const message = reminders.length ? { customType: REMINDER_TYPE, content: reminders.join("\n\n"), display: true } : undefined;
    reminders = [];
    // Pi rebuilds its system prompt every turn: re-apply the same bytes (zero churn).
    const systemPrompt = section ? `${event.systemPrompt}\n\n${section}` : undefined;
    return systemPrompt || message ? { systemPrompt, message } : undefined;
  });

  // ---- stream rules: Pi's streamed output -> stream_turn / stream_delta / stream_end ----

  pi.on("agent_start", async () => {
    await stream?.drain(); // the last run's answers first: a late one must not abort this run
    run += 1;
  });

  pi.on("turn_start", () => {
    callIds = new Map();
    stream?.push({ kind: "turn", run });
  });

  // Not awaited: Pi's UI renders each delta after the extension handlers for it, so a
  // round trip per delta would slow the visible stream. The model's stream itself never
  // waits for extensions (Pi queues their events), hence the gate in tool_call below.
  pi.on("message_update", (event, ctx) => {
    if (!stream) return;
    streamCtx = ctx;
    const update = event.assistantMessageEvent;
    const none = { tool: null, callId: null, path: null };
    switch (update.type) {
      case "text_delta":
        stream.push({ kind: "delta", run, source: "text", text: update.delta, ...none });
        break;
      case "thinking_delta":
        stream.push({ kind: "delta", run, source: "thinking", text: update.delta, ...none });
        break;
      case "toolcall_delta": {
        const call = update.partial.content[update.contentIndex];
        if (call?.type !== "toolCall") break;
        stream.push({
          kind: "delta", run, source: "tool", text: update.delta,
          tool: call.name, callId: callIdOf(update.contentIndex, call.id), path: pathOf(call.arguments),
        });
        break;
      }
      case "text_end":
        stream.push({ kind: "end", run, source: "text", ...none });
        break;
      case "thinking_end":
        stream.push({ kind: "end", run, source: "thinking", ...none });
        break;
      case "toolcall_end": {
        const call = update.toolCall;
        const callId = callIdOf(update.contentIndex, call.id);
        stream.push({ kind: "end", run, source: "tool", tool: call.name, callId, path: pathOf(call.arguments) });
        break;
      }
    }
  });

  // Pi waits for its queued extension events before tool_call, and we wait for the
  // watcher's answers: a tool never runs before its own arguments were checked.
  pi.on("tool_call", async () => {
    try {
      await stream?.drain();
      if (interruptedRun === run) {
        return { block: true, reason: "Blocked by pi-rules: a stream rule interrupted this output (see the rule interrupt)." };
      }
      // Steering messages are read after this turn's tool calls, before the next model call.
      if (reminders.length) send(REMINDER_TYPE, reminders.join("\n\n"), { deliverAs: "steer" });
      reminders = [];
    } catch (error) {
      console.error(String(error)); // a throwing tool_call handler would block the tool
    }
    return undefined;
  });

  pi.registerCommand("rules", {
    description: "Rules: report, show <id>, why <path>, mute <id>, unmute <id>",
    handler: async (args, ctx) => {
      const answer = await safely(() => server!.call<Text>("command", { text: `/rules ${args ?? ""}` }));
      // The report of an untrusted project says why its rules are missing, and the fix.
      if (answer) ctx.ui.notify(trustNotice ? `${answer.text.trimEnd()}\n${trustNotice}` : answer.text, "info");
    },
  });
}
