#!/usr/bin/env node
// Claude Code Stop hook: when this turn asked a Benchwarmers panel and some seats' answers have no verdict yet,
// keep the agent going once to judge them. Silent (exit 0) when nothing waits, when it already reminded this turn
// (stop_hook_active), or when the service, the transcript or the input cannot be read.
"use strict";

const fs = require("fs");

const DEFAULT_URL = "http://127.0.0.1:8122";
const TIMEOUT_MS = 5000;
const MAX_CALLS = 200;
// the `ask` tool writes one heading per seat: "## Seat 2 · beta · member · ok · call Xy3k9aQ2"
const SEAT_HEADING = /^## Seat \d+ · .* · call ([A-Za-z0-9_-]{1,64})\s*$/gm;
// an MCP tool named `ask` as Claude Code names it: mcp__<server>__ask, or mcp__plugin_<plugin>_<server>__ask
const ASK_TOOL = /^mcp__.+__ask$/;

function readStdin() {
  try {
    return JSON.parse(fs.readFileSync(0, "utf8"));
  } catch (err) {
    return null;
  }
}

function entries(transcriptPath) {
  const out = [];
  for (const line of fs.readFileSync(transcriptPath, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      // a line being written as we read, or one we do not know: skip it
    }
  }
  return out;
}

function blocks(entry) {
  const content = entry && entry.message && entry.message.content;
  return Array.isArray(content) ? content : [];
}

// The user's own prompt (not a tool result, not a meta or side-chain entry) starts a turn.
function startsTurn(entry) {
  if (!entry || entry.type !== "user" || entry.isMeta || entry.isSidechain) return false;
  const content = entry.message && entry.message.content;
  if (typeof content === "string") return true;
  return Array.isArray(content) && content.some((b) => b && b.type === "text")
    && !content.some((b) => b && b.type === "tool_result");
}

function resultText(block) {
  if (typeof block.content === "string") return block.content;
  if (!Array.isArray(block.content)) return "";
  return block.content.filter((c) => c && c.type === "text").map((c) => c.text || "").join("\n");
}

// The call ids of every seat the `ask` tool returned in the current turn.
function callsThisTurn(all) {
  let start = 0;
  all.forEach((entry, i) => { if (startsTurn(entry)) start = i; });
  const asks = new Set();
  const calls = [];
  for (const entry of all.slice(start)) {
    for (const block of blocks(entry)) {
      if (block.type === "tool_use" && ASK_TOOL.test(block.name || "")) asks.add(block.id);
      if (block.type === "tool_result" && asks.has(block.tool_use_id)) {
        for (const match of resultText(block).matchAll(SEAT_HEADING)) {
          if (!calls.includes(match[1])) calls.push(match[1]);
        }
      }
    }
  }
  return calls.slice(-MAX_CALLS);
}

function serviceUrl() {
  let url = (process.env.BENCHWARMERS_URL || DEFAULT_URL).trim().replace(/\/+$/, "");
  if (url.endsWith("/v1")) url = url.slice(0, -3);
  return url.includes("://") ? url : "http://" + url;
}

async function pending(calls) {
  const headers = { Accept: "application/json" };
  if (process.env.BENCHWARMERS_KEY) headers.Authorization = "Bearer " + process.env.BENCHWARMERS_KEY;
  const query = new URLSearchParams({ calls: calls.join(","), limit: String(MAX_CALLS) });
  const resp = await fetch(`${serviceUrl()}/bench/pending?${query}`, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!resp.ok) return [];
  const data = await resp.json();
  return Array.isArray(data.pending) ? data.pending : [];
}

// Only ids, seats and models go back to the agent: it has the answers in its context already, and a seat's own words
// do not belong in an instruction.
function reason(waiting) {
  const lines = waiting.map((p) => `- call ${p.call} · seat ${p.seat} · ${p.model}`);
  return [
    `Benchwarmers: ${waiting.length} answer(s) from the panel you asked this turn have no verdict yet:`,
    ...lines,
    "Send a `verdict` (call, useful, real, false) for each one you checked against the code, and tell the user " +
      "about any you did not check rather than judging it unchecked. Verdicts decide which models get seated.",
  ].join("\n");
}

// What to print: the block decision, or "" to let the turn end.
async function main() {
  const input = readStdin();
  if (!input || input.stop_hook_active || typeof input.transcript_path !== "string") return "";
  const calls = callsThisTurn(entries(input.transcript_path));
  if (!calls.length) return "";
  const waiting = await pending(calls);
  return waiting.length ? JSON.stringify({ decision: "block", reason: reason(waiting) }) + "\n" : "";
}

// Exit once the output is written (a pipe may be asynchronous), without waiting for idle connections to close.
main().then(
  (out) => (out ? process.stdout.write(out, () => process.exit(0)) : process.exit(0)),
  () => process.exit(0),
);
