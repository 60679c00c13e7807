#!/usr/bin/env node
// A minimal MCP stdio server whose misbehaviour is chosen by its first argument, for the
// client's failure tests:
//   paged     tools/list in pages of 2 (5 tools), one cursor after another
//   changing  one tool; "grow" adds another and sends notifications/tools/list_changed
//   crash     "die" exits the process in the middle of the call
//   garbage   a line of junk before every answer, and "noise" answers only junk
//   silent    answers initialize with junk only (the handshake never completes)
//   slow      "wait" never answers; "cancelled" lists the notifications/cancelled received
//   echo      one tool, "echo", answering its arguments (the round-trip bench)
//   pingpong  no protocol: every line in is answered with $REPLY_LINE (the bench's baseline)
import { createInterface } from "node:readline";

const mode = process.argv[2] || "paged";
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const junk = () => process.stdout.write("this is not json {{{\n");
const tool = (name) => ({ name, description: `the ${name} tool`, inputSchema: { type: "object" } });

let tools = mode === "paged" ? ["t1", "t2", "t3", "t4", "t5"].map(tool)
  : mode === "echo" ? [tool("echo")]
  : mode === "slow" ? [tool("wait"), tool("cancelled")] : [tool("echo"), tool("die")];
const cancelled = [];

function answer(req) {
  const p = req.params || {};
  switch (req.method) {
    case "initialize":
      if (mode === "silent") return null;
      return { protocolVersion: p.protocolVersion, capabilities: { tools: { listChanged: true } },
               serverInfo: { name: "scripted", version: "1" } };
    case "tools/list": {
      if (mode !== "paged") return { tools };
      const start = p.cursor ? Number(p.cursor) : 0;
      const page = tools.slice(start, start + 2);
      const next = start + 2 < tools.length ? String(start + 2) : undefined;
      return next ? { tools: page, nextCursor: next } : { tools: page };
    }
    case "tools/call":
      if (p.name === "die") process.exit(7);
      if (p.name === "grow") {
        tools.push(tool("grown"));
        setTimeout(() => send({ method: "notifications/tools/list_changed" }), 10);
        return { content: [{ type: "text", text: "grew" }] };
      }
      if (p.name === "noise") return null;
      if (p.name === "wait") return null;
      if (p.name === "cancelled") return { content: [{ type: "text", text: JSON.stringify(cancelled) }] };
      return { content: [{ type: "text", text: JSON.stringify(p.arguments) }] };
    default:
      return undefined;
  }
}

if (mode === "changing") tools.push(tool("grow"));
if (mode === "garbage") tools.push(tool("noise"));

if (mode === "pingpong") {
  const reply = process.env.REPLY_LINE + "\n";
  createInterface({ input: process.stdin }).on("line", () => process.stdout.write(reply));
} else createInterface({ input: process.stdin }).on("line", (line) => {
  const req = JSON.parse(line);
  if (req.method === "notifications/cancelled") cancelled.push(req.params);
  if (req.id === undefined) return;
  if (mode === "garbage" || mode === "silent") junk();
  const result = answer(req);
  if (result === null) return mode === "slow" ? undefined : junk();
  if (result === undefined) return send({ id: req.id, error: { code: -32601, message: "no such method" } });
  send({ id: req.id, result });
});
