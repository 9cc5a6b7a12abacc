// pi-rules for Pi: forwards Pi's events to `pi-rules serve` (JSON lines over stdio) and
// does what the answers say. All rule logic lives in the Python server; this file only
// translates. Persistence is Pi's own: touched-path entries go into the Pi session with
// pi.appendEntry and come back from ctx.sessionManager.getBranch() on start and /tree.
// The model's streamed output goes to the stream watcher (docs/stream.md) without ever
// holding up Pi's event queue: see StreamPump (stream.ts). The `pi-rules serve` child is
// RulesServer (server.ts). See docs/protocol.md for every method.

import type { ImageContent, TextContent } from "@earendil-works/pi-ai";
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { hostTrust, RulesServer, untrustedNotice, type Json } from "./server.ts";
import { pathOf, StreamPump, type StreamOp, type StreamResult } from "./stream.ts";

const SECTION_KEY = "pi-rules-md";
const INTERRUPT_TYPE = "pi-rules-md/interrupt"; // custom message types (shown, sent to the model)
const REMINDER_TYPE = "pi-rules-md/reminder";
const IDLE_POLL_MS = 50; // after an abort: how often to look whether Pi is idle again,
const IDLE_POLLS = 200; // and for how long (10 s) before queueing the interrupt instead

// The answers this file reads (docs/protocol.md); the server's JSON is trusted to match.
type Capture = { entry: { customType: string; data: Json } | null };
type ToolResultEffect = { content: (TextContent | ImageContent)[] | null };
type Turn = { action: "patch" | "remove" | "keep" | "none"; section: string | null; status: string | null };
type Text = { text: string };
type RuleTool = { name: string; description: string; parameters: ToolDefinition["parameters"] };

export default function (pi: ExtensionAPI) {
  let server: RulesServer | undefined;
  let section: string | null = null; // the pi-rules-md section, re-applied every turn
  let toolRegistered = false;
  let trustNotice: string | undefined; // set while the project has rules we may not read
  const noticed = new Set<string>(); // project roots already told about, once per Pi process
  let serverTrust: boolean | undefined; // the trust the running server was started with

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

  // One `pi-rules serve` per session, started with Pi's trust decision when Pi has one
  // (ctx.isProjectTrusted, Pi >= 0.79.1) and the user's trust store otherwise (0.73).
  const startServer = async (ctx: ExtensionContext, reason: string) => {
    server?.close();
    stream?.stop();
    serverTrust = hostTrust(ctx);
    server = new RulesServer(ctx.cwd, serverTrust);
    stream = new StreamPump(() => server, onStreamResult);
    section = null;
    pendingInterrupt = undefined;
    reminders = [];
    interruptedRun = -1;
    await safely(() => server!.call("session_start", { reason, entries: branch(ctx) }));
    trustNotice = await untrustedNotice(server);
    if (trustNotice && !noticed.has(trustNotice)) {
      noticed.add(trustNotice);
      const notice = trustNotice;
      await safely(async () => ctx.ui.notify(notice, "warning")); // no UI (print mode): a no-op
    }
  };

  pi.on("session_start", async (event, ctx) => {
    await startServer(ctx, event.reason);
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
    // Pi decides trust (a project_trust answer, a saved /trust decision, --approve) before
    // session_start, and may decide again later: asked every run (a boolean, no I/O), a
    // changed answer replaces the server, whose session is rebuilt from Pi's branch.
    const trusted = hostTrust(ctx);
    if (trusted !== undefined && trusted !== serverTrust) await startServer(ctx, "reload");
    const options = event.systemPromptOptions;
    const turn = await safely(() =>
      server!.call<Turn>("before_agent_start", {
        prompt: "prompt" in event ? event.prompt : "", // 1.6: a run a custom message started has none
        model: ctx.model?.id ?? null,
        tools: options?.selectedTools ?? pi.getActiveTools(),
        // What Pi itself put in the prompt: pi-rules leaves exactly that out (docs/protocol.md).
        context_files: options?.contextFiles?.map((file) => ({ path: file.path, content: file.content })) ?? null,
        skills: options?.skills?.map((skill) => ({ name: skill.name, path: skill.filePath })) ?? null,
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
