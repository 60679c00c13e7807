// Hearth's page: no framework, no CDN. Every state change carries the session's CSRF token.
"use strict";
let csrf = null;
const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const headers = {};
  if (csrf) headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function show(tab) {
  document.querySelectorAll(".tab").forEach((s) => (s.hidden = s.id !== tab));
  if (tab === "memory") loadRecalled();
  if (tab === "plugins") loadPlugins();
  if (tab === "sources") loadSources();
  if (tab === "status") loadStatus();
}

async function start() {
  const s = await api("GET", "/api/session");
  if (s.logged_in) {
    csrf = s.csrf;
    $("login").hidden = true;
    $("nav").hidden = false;
    show("chat");
    await loadHistory();
  } else {
    $("login").hidden = false;
    $("login-title").textContent = s.setup_needed ? "Choose a password" : "Log in";
    $("login-hint").textContent = s.setup_needed ? "First start: choose the password for this page (8 characters or more)." : "";
    $("password").autocomplete = s.setup_needed ? "new-password" : "current-password";
    $("login-form").dataset.setup = s.setup_needed ? "1" : "";
  }
}

$("login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const path = e.target.dataset.setup ? "/api/setup" : "/api/login";
  try {
    const r = await api("POST", path, { password: $("password").value });
    csrf = r.csrf;
    $("password").value = "";
    $("login-error").textContent = "";
    await start();
  } catch (err) {
    $("login-error").textContent = err.message;
  }
});

$("logout").addEventListener("click", async () => { await api("POST", "/api/logout").catch(() => {}); csrf = null; location.reload(); });
document.querySelectorAll("nav button[data-tab]").forEach((b) => b.addEventListener("click", () => show(b.dataset.tab)));

function bubble(cls, text) {
  const div = document.createElement("div");
  div.className = "msg " + cls;
  div.textContent = text;
  $("log").appendChild(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

function toolLine(parent, t) {
  const d = document.createElement("div");
  d.className = "tool";
  d.textContent = `🔧 ${t.tool}(${JSON.stringify(t.args)}) → ${String(t.result).slice(0, 400)}`;
  parent.prepend(d);
}

// Bubbles whose answer is still streaming; the stop button marks them.
const running = new Set();

function ending(div, reply) {
  // A stopped answer ends as an ordinary reply holding what was said so far.
  if (div.dataset.stopPressed && !reply.skipped) {
    const s = document.createElement("div");
    s.className = "stopped";
    s.textContent = "stopped";
    div.appendChild(s);
  }
  if (reply.skipped) {
    const s = document.createElement("div");
    s.className = "stopped";
    s.textContent = reply.reason === "cancelled" || reply.reason === "stopped" ? "stopped" : `not answered: ${reply.reason}`;
    div.appendChild(s);
  }
}

// Follows one answer; EventSource reconnects by itself and sends Last-Event-ID, so a dropped
// connection resumes after the last item it saw.
function follow(id, div) {
  const text = document.createElement("span");
  div.appendChild(text);
  div.dataset.request = id;
  let streamed = "";
  running.add(div);
  const es = new EventSource(`/api/chat/${encodeURIComponent(id)}/events`);
  es.addEventListener("delta", (e) => { streamed += JSON.parse(e.data).content; text.textContent = streamed; });
  es.addEventListener("reset", () => { streamed = ""; text.textContent = ""; });
  es.addEventListener("tool", (e) => toolLine(div, JSON.parse(e.data)));
  es.addEventListener("done", (e) => {
    es.close();
    running.delete(div);
    const reply = JSON.parse(e.data);
    // The reply is the whole answer, whatever the stream lost.
    if (!reply.skipped || reply.content) text.textContent = reply.content || streamed;
    ending(div, reply);
  });
  es.onerror = () => { $("notice").hidden = false; $("notice").textContent = "connection lost; reconnecting…"; };
  es.onopen = () => { $("notice").hidden = true; };
}

async function loadHistory() {
  const h = await api("GET", "/api/history");
  $("log").textContent = "";
  for (const t of h.turns) {
    bubble("user", t.text || "");
    const div = bubble("agent", "");
    if (t.reply === null) {
      $("notice").hidden = false;
      $("notice").textContent = "resumed after a restart: this answer is still coming";
      follow(t.request_id, div);
    } else {
      div.textContent = t.reply || "";
      ending(div, { skipped: !!t.skipped, reason: t.skipped });
    }
  }
}

$("send-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  bubble("user", text);
  const div = bubble("agent", "");
  try {
    const body = { text, interrupt: $("interrupt").checked };
    if (body.interrupt) body.priority = $("priority").value;
    const r = await api("POST", "/api/chat", body);
    follow(r.request_id, div);
  } catch (err) {
    div.textContent = err.message;
    div.classList.add("error");
  }
});

$("stop").addEventListener("click", () => {
  running.forEach((div) => (div.dataset.stopPressed = "1"));
  api("POST", "/api/stop").catch((e) => alert(e.message));
});

async function searchMemory() {
  const out = $("memory-out");
  try {
    const r = await api("GET", "/api/memory?q=" + encodeURIComponent($("memory-q").value));
    const recent = r.recent || [];
    out.textContent = r.items.length || recent.length ? "" : "Nothing in memory matches.";
    const table = document.createElement("table");
    // Turns said so recently they are still in the working window first: what a person
    // looking to take something back has usually just said.
    for (const item of recent) table.appendChild(memoryRow(item, "said recently"));
    for (const item of r.items) table.appendChild(memoryRow(item, why(item)));
    out.appendChild(table);
  } catch (err) { out.textContent = err.message; }
}

// One found memory (`item.id`: a number, or `w12` for a recent turn) with its forget button.
function memoryRow(item, found) {
  const tr = document.createElement("tr");
  tr.dataset.memory = item.id;
  cell(tr, `#${item.id}`);
  cell(tr, item.text);
  cell(tr, found);
  button(cell(tr, ""), "forget", async () => {
    if (!confirm(`Forget memory #${item.id} for good? The exchange it belongs to goes, with what was learned only from it.\n\n${item.text.slice(0, 200)}`)) return;
    try { await api("POST", `/api/memory/${item.id}/forget`); tr.remove(); } catch (e) { alert(e.message); }
  });
  return tr;
}

// Why a memory item was found: its fused score, by meaning and by keywords, and its time.
function why(item) {
  const parts = [`score ${item.score.toPrecision(3)}`];
  if (item.cosine != null) parts.push(`meaning ${item.cosine.toFixed(3)}`);
  if (item.keyword != null) parts.push(`keywords ${item.keyword.toPrecision(3)}`);
  return `${parts.join(", ")}; from ${new Date(item.at_ms).toLocaleString()}`;
}

// What recall put in front of the model for each past turn, and why, from the journal.
async function loadRecalled() {
  const out = $("recalled-out");
  try {
    const h = await api("GET", "/api/history");
    out.textContent = "";
    const turns = h.turns.filter((t) => Array.isArray(t.recalled) && t.recalled.length);
    if (!turns.length) { out.textContent = "No turn has been given recalled memory yet."; return; }
    const table = document.createElement("table");
    for (const t of turns.reverse()) {
      const head = document.createElement("tr");
      head.dataset.turn = t.request_id;
      const th = document.createElement("th");
      th.colSpan = 3;
      th.textContent = `“${(t.text || "").slice(0, 120)}” at ${new Date(t.accepted_ms).toLocaleString()}`;
      head.appendChild(th);
      table.appendChild(head);
      for (const item of t.recalled) {
        const tr = document.createElement("tr");
        tr.dataset.recalled = item.id;
        cell(tr, `#${item.id}`);
        cell(tr, item.forgotten ? "(forgotten)" : item.text);
        cell(tr, why(item));
        table.appendChild(tr);
      }
    }
    out.appendChild(table);
  } catch (err) { out.textContent = err.message; }
}

$("memory-form").addEventListener("submit", (e) => { e.preventDefault(); searchMemory(); });

function cell(tr, text) { const td = document.createElement("td"); td.textContent = text; tr.appendChild(td); return td; }
function button(td, label, onclick) { const b = document.createElement("button"); b.textContent = label; b.addEventListener("click", onclick); td.appendChild(b); }

async function loadPlugins() {
  const table = $("plugins-table");
  try {
    const r = await api("GET", "/api/list/plugins");
    table.textContent = "";
    for (const p of r.plugins.plugins || []) {
      const tr = document.createElement("tr");
      tr.dataset.plugin = p.name;
      cell(tr, p.name);
      cell(tr, p.state + (p.enabled === false ? " (disabled)" : ""));
      cell(tr, `crashes ${p.crashes ?? p.crash_count ?? 0}`);
      const td = cell(tr, "");
      for (const action of [p.enabled === false ? "enable" : "disable", "reload"]) {
        button(td, action, async () => { await api("POST", `/api/plugins/${encodeURIComponent(p.name)}/${action}`).catch((e) => alert(e.message)); loadPlugins(); });
      }
      table.appendChild(tr);
    }
  } catch (err) { table.textContent = err.message; }
}

async function loadSources() {
  const table = $("sources-table");
  try {
    const r = await api("GET", "/api/list/sources");
    table.textContent = "";
    // The fallback order of a turn that names no model (the kernel's own rule): higher
    // priority first, then the default source, then by name.
    const order = (r.sources || []).slice().sort((a, b) =>
      (b.priority || 0) - (a.priority || 0) || (b.is_default ? 1 : 0) - (a.is_default ? 1 : 0) || a.name.localeCompare(b.name));
    order.forEach((s, i) => {
      const tr = document.createElement("tr");
      tr.dataset.source = s.name;
      cell(tr, `${i + 1}.`); cell(tr, s.name); cell(tr, s.model || ""); cell(tr, `priority ${s.priority || 0}`); cell(tr, s.available ? "up" : "down");
      const td = cell(tr, "");
      button(td, "test", async () => { try { const m = await api("POST", `/api/sources/${encodeURIComponent(s.name)}/test`); $("sources-msg").textContent = m.content; } catch (e) { $("sources-msg").textContent = e.message; } });
      button(td, "remove", async () => { if (confirm(`Remove source ${s.name}?`)) { await api("POST", `/api/sources/${encodeURIComponent(s.name)}/remove`).catch((e) => alert(e.message)); loadSources(); } });
      table.appendChild(tr);
    });
  } catch (err) { table.textContent = err.message; }
}

$("source-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const source = { name: $("src-name").value, base_url: $("src-url").value, model: $("src-model").value, adapter: $("src-adapter").value, priority: Number($("src-priority").value) };
  if ($("src-key").value) source.api_key = $("src-key").value;
  $("src-key").value = "";
  try { const m = await api("POST", "/api/sources", source); $("sources-msg").textContent = m.content; loadSources(); }
  catch (err) { $("sources-msg").textContent = err.message; }
});

async function loadStatus() {
  try { const r = await api("GET", "/api/list/status"); $("status-out").textContent = JSON.stringify(r.status, null, 2); }
  catch (err) { $("status-out").textContent = err.message; }
}

start().catch((e) => { document.body.textContent = e.message; });
