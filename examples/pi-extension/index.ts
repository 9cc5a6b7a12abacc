// pi-rules for Pi: forwards Pi's events to `pi-rules serve` (JSON lines over stdio) and
// does what the answers say. All rule logic lives in the Python server; this file only
// translates. Persistence is Pi's own: touched-path entries go into the Pi session with
// pi.appendEntry and come back from ctx.sessionManager.getBranch() on start and /tree.
// See docs/protocol.md in pi-rules for every method.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

const SECTION_KEY = "pi-rules-md";
const COMMAND = process.env.PI_RULES_COMMAND ?? "pi-rules";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Pending = { resolve: (value: any) => void; reject: (error: Error) => void };

class RulesServer {
  private child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private pending = new Map<number, Pending>();

  constructor(cwd: string, trusted: boolean) {
    const args = ["--cwd", cwd, ...(trusted ? [] : ["--untrusted"]), "serve"];
    this.child = spawn(COMMAND, args, { stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout }).on("line", (line) => this.answer(line));
    this.child.stderr.on("data", () => {}); // diagnostics only; never block on a full pipe
    const failAll = (error: Error) => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    this.child.on("error", failAll);
    this.child.on("exit", () => failAll(new Error("pi-rules serve exited")));
  }

  // Requests are answered in order, one line each; ids only pair them up.
  call<T = any>(method: string, params: { [key: string]: Json | undefined } = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin.write(JSON.stringify({ id, method, params }) + "\n");
    });
  }

  close(): void {
    this.child.stdin.end(); // EOF: the server exits 0
  }

  private answer(line: string): void {
    let response: any;
    try {
      response = JSON.parse(line);
    } catch {
      return;
    }
    const waiter = this.pending.get(response.id);
    if (!waiter) return;
    this.pending.delete(response.id);
    if (response.error) waiter.reject(new Error(`pi-rules: ${response.error.message}`));
    else waiter.resolve(response.result);
  }
}

export default function (pi: ExtensionAPI) {
  let server: RulesServer | undefined;
  let section: string | null = null; // the pi-rules-md section, re-applied every turn
  let toolRegistered = false;

  // A rules failure must never break the agent: log and carry on without rules.
  const safely = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (error) {
      console.error(String(error));
      return undefined;
    }
  };
  const branch = (ctx: ExtensionContext) => ctx.sessionManager.getBranch() as unknown as Json[];

  pi.on("session_start", async (event, ctx) => {
    server?.close();
    const trusted = (ctx as any).isProjectTrusted?.() ?? false; // untrusted unless Pi says so
    server = new RulesServer(ctx.cwd, trusted);
    section = null;
    await safely(() => server!.call("session_start", { reason: event.reason, entries: branch(ctx) }));
    if (!toolRegistered) {
      const tool = await safely(() => server!.call("read_rule_tool"));
      if (tool) {
        toolRegistered = true;
        pi.registerTool({
          name: tool.name,
          label: "Read rule",
          description: tool.description,
          parameters: tool.parameters, // plain JSON Schema, as TypeBox produces
          async execute(_id: string, params: any) {
            const answer = await safely(() => server!.call("read_rule", { args: params }));
            return { content: [{ type: "text", text: answer?.text ?? "Unknown rule: " }], details: {} };
          },
        } as any);
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
    server?.close();
    server = undefined;
  });

  pi.on("tool_execution_start", async (event) => {
    const capture = await safely(() => server!.call("tool_start", { tool: event.toolName, args: event.args }));
    if (capture?.entry) pi.appendEntry(capture.entry.customType, capture.entry.data);
  });

  pi.on("tool_result", async (event) => {
    const effect = await safely(() =>
      server!.call("tool_result", { tool: event.toolName, content: event.content as any, is_error: event.isError }),
    );
    return effect?.content ? { content: effect.content } : undefined; // undefined: leave it as is
  });

  pi.on("before_agent_start", async (event, ctx) => {
    const turn = await safely(() =>
      server!.call("before_agent_start", {
        prompt: event.prompt ?? "",
        model: ctx.model?.id ?? null,
        tools: (event as any).systemPromptOptions?.selectedTools ?? pi.getActiveTools(),
      }),
    );
    if (turn?.action === "patch") section = turn.section;
    else if (turn?.action === "remove") section = null;
    if (ctx.hasUI && turn) ctx.ui.setStatus(SECTION_KEY, turn.status ?? undefined);
    // Pi rebuilds its system prompt every turn: re-apply the same bytes (zero churn).
    return section ? { systemPrompt: `${event.systemPrompt}\n\n${section}` } : undefined;
  });

  pi.registerCommand("rules", {
    description: "Rules: report, show <id>, why <path>, mute <id>, unmute <id>",
    handler: async (args, ctx) => {
      const answer = await safely(() => server!.call("command", { text: `/rules ${args ?? ""}` }));
      if (answer) ctx.ui.notify(answer.text, "info");
    },
  });
}
