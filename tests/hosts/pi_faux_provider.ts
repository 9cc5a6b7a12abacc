// Test-only Pi extension: registers Pi's scripted `faux` provider (from @mariozechner/pi-ai,
// which Pi aliases for extensions) as the provider "faux", model "faux-1". The script is a
// JSON file named by PI_FAUX_SCRIPT: a list of assistant replies, one per model request, each
// a list of blocks `{"text": "..."}` or `{"tool": "write", "args": {...}}`. Every request the
// provider receives (system prompt and messages) is appended as one JSON line to
// PI_FAUX_LOG, so a test asserts on what really reached the model. It runs unchanged under
// Pi 0.73.1 and 1.6 (which maps the @mariozechner names to its own packages). The system prompt is
// `context.systemPrompt` (Pi 0.73) or, from Pi 1.6 on, the text of the transcript's
// `role: "system"` messages: each one's content, then its sections in order, a later message
// replacing a section by name (null removes it) — the prompt as the model reads it.

import { appendFileSync, readFileSync } from "node:fs";
import {
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
  streamSimple,
  type FauxContentBlock,
  type FauxResponseStep,
} from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const FAUX_API = "pi-rules-faux-script";

type Block = { text?: string; tool?: string; args?: Record<string, unknown> };

type Section = Record<string, string | null>;
type SystemLike = { role: string; content?: unknown; sections?: Section };

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("")
      : "";

const systemPromptOf = (context: { systemPrompt?: string; messages: unknown[] }): string => {
  if (context.systemPrompt) return context.systemPrompt;
  const contents: string[] = [];
  const sections = new Map<string, string>();
  for (const message of context.messages as SystemLike[]) {
    if (message?.role !== "system") continue;
    const text = textOf(message.content);
    if (text) contents.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  return [...contents, ...sections.values()].join("\n\n");
};

const toBlock = (block: Block, index: number): FauxContentBlock =>
  block.tool !== undefined
    ? fauxToolCall(block.tool, block.args ?? {}, { id: `call-${index}` })
    : fauxText(block.text ?? "");

export default function (pi: ExtensionAPI) {
  const script = JSON.parse(readFileSync(process.env.PI_FAUX_SCRIPT ?? "", "utf8")) as Block[][];
  const log = process.env.PI_FAUX_LOG ?? "";
  // Pi 1.6's trust question (project_trust), answered like a user's own extension would:
  // PI_FAUX_TRUST=yes|no decides, unset leaves it to Pi (RPC mode: untrusted).
  const trust = process.env.PI_FAUX_TRUST;
  if (trust === "yes" || trust === "no") pi.on("project_trust", () => ({ trusted: trust }));
  const faux = registerFauxProvider({ api: FAUX_API, provider: "faux", models: [{ id: "faux-1" }] });
  const steps: FauxResponseStep[] = script.map((reply, step) => (context) => {
    appendFileSync(log, JSON.stringify({ systemPrompt: systemPromptOf(context), messages: context.messages }) + "\n");
    const blocks = reply.map((block, index) => toBlock(block, step * 100 + index));
    const usesTools = reply.some((block) => block.tool !== undefined);
    return fauxAssistantMessage(blocks, { stopReason: usesTools ? "toolUse" : "stop" });
  });
  faux.setResponses(steps);
  pi.registerProvider("faux", {
    baseUrl: "http://faux.invalid",
    apiKey: "faux",
    api: "pi-rules-faux",
    // Pi registers this function under the api "pi-rules-faux"; the scripted stream lives
    // under its own api name, so the call does not come back here.
    streamSimple: (model, context, options) => streamSimple({ ...model, api: FAUX_API }, context, options),
    models: [
      {
        id: "faux-1",
        name: "Faux",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128000,
        maxTokens: 16384,
      },
    ],
  });
}
