// toposcope's web view: the switch tree, occupancy, snapshots and
// placement, read from the service's own REST API (same origin). Every
// text from the API is set as text, never as markup.
"use strict";

const state = { token: sessionStorage.getItem("toposcope-token") || "", rows: new Map(), candidates: new Set() };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

const fmt = (n) => Number(n).toLocaleString("en-US");
const when = (t) => new Date(t).toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" });

// api fetches a path of the API; on 401 it asks for a token once and
// retries.
async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (state.token) headers.Authorization = "Bearer " + state.token;
  if (opts.body) headers["Content-Type"] = "application/json";
  const r = await fetch(path, Object.assign({}, opts, { headers }));
  if (r.status === 401 && !opts.retried) {
    if (await askToken()) return api(path, Object.assign({}, opts, { retried: true }));
  }
  const body = r.headers.get("Content-Type")?.includes("json") ? await r.json() : await r.text();
  if (!r.ok) {
    const msg = body && body.error ? body.error.message || body.error : r.status + " " + r.statusText;
    throw new Error(path.split("?")[0] + ": " + (typeof msg === "string" ? msg : JSON.stringify(msg)));
  }
  return body;
}

function askToken() {
  const d = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  input.value = "";
  return new Promise((resolve) => {
    d.onclose = () => {
      if (d.returnValue === "ok" && input.value.trim()) {
        state.token = input.value.trim();
        sessionStorage.setItem("toposcope-token", state.token);
        resolve(true);
      } else resolve(false);
    };
    d.returnValue = "";
    d.showModal();
  });
}

function showError(e) {
  const b = document.getElementById("error");
  b.textContent = e ? String(e.message || e) : "";
  b.hidden = !e;
}

function bar(o) {
  const g = o.gpus || 1;
  return el("span", { class: "bar", title: `${fmt(o.allocated)} allocated, ${fmt(o.unallocated)} unallocated, ${fmt(o.free)} free of ${fmt(o.gpus)} GPUs` },
    el("i", { class: "a", style: `width:${(100 * o.allocated) / g}%` }),
    el("i", { class: "u", style: `width:${(100 * o.unallocated) / g}%` }));
}

function protText(o) {
  return o.protectedUntil ? " · protected until " + when(o.protectedUntil) : "";
}

// switchItem renders one switch of the tree, collapsed.
function switchItem(s) {
  const kids = el("ul");
  const caret = el("span", { class: "caret" }, "▸");
  const row = el("div", { class: "row switch", "data-id": s.id },
    caret, el("span", { class: "name" }, s.displayName || s.name), bar(s.occupancy),
    el("span", { class: "counts" }, `L${s.level} · ${fmt(s.nodes)} nodes · ${fmt(s.gpus)} GPUs · ${fmt(s.occupancy.free)} free · ${fmt(s.domains)} domains` + protText(s.occupancy)));
  const li = el("li", {}, row, kids);
  const entry = { li, row, kids, caret, loaded: false, open: false };
  state.rows.set("s:" + s.id, entry);
  row.addEventListener("click", () => toggle(s.id).catch(showError));
  if (state.candidates.has(s.id)) row.classList.add("cand");
  return li;
}

function nodeItem(n) {
  const o = n.occupancy;
  const row = el("div", { class: "row node", "data-node": n.name },
    el("span", { class: "caret" }),
    el("span", { class: "name" }, n.name), bar(o),
    el("span", { class: "counts" }, `${n.gpus} GPUs · ${o.free} free` + (n.domain ? ` · ${n.domain}` : "") + (n.instanceID ? ` · ${n.instanceID}` : "") + protText(o)));
  row.addEventListener("click", () => showPath(n.name).catch(showError));
  state.rows.set("n:" + n.name, { row });
  if (state.candidates.has("n:" + n.name)) row.classList.add("cand");
  return el("li", {}, row);
}

function fill(ul, t) {
  ul.replaceChildren();
  for (const c of t.children) ul.append(switchItem(c));
  for (const n of t.nodes) ul.append(nodeItem(n));
  if (t.nodesTruncated) ul.append(el("li", { class: "muted" }, `… ${fmt(t.nodeCount - t.nodes.length)} more nodes`));
}

async function toggle(id, forceOpen) {
  const e = state.rows.get("s:" + id);
  if (!e) return;
  if (!e.loaded) {
    fill(e.kids, await api("/v1/tree?switch=" + encodeURIComponent(id)));
    e.loaded = true;
  }
  e.open = forceOpen ? true : !e.open;
  e.kids.hidden = !e.open;
  e.caret.textContent = e.open ? "▾" : "▸";
}

// unplacedGroup holds the nodes under no switch (the top level's nodes)
// in a group of their own, collapsed, instead of drawing them at the
// indent of a switch's nodes.
function unplacedGroup(t) {
  const kids = el("ul", { hidden: "" });
  const caret = el("span", { class: "caret" }, "▸");
  const row = el("div", { class: "row unplaced", "data-id": "" },
    caret, el("span", { class: "name" }, "not placed"),
    el("span", { class: "counts" }, `${fmt(t.nodeCount)} nodes under no switch`));
  for (const n of t.nodes) kids.append(nodeItem(n));
  if (t.nodesTruncated) kids.append(el("li", { class: "muted" }, `… ${fmt(t.nodeCount - t.nodes.length)} more nodes`));
  const open = (on) => {
    kids.hidden = !on;
    caret.textContent = on ? "▾" : "▸";
  };
  row.addEventListener("click", () => open(kids.hidden));
  state.unplaced = open;
  return el("li", {}, row, kids);
}

async function loadTree() {
  const t = await api("/v1/tree");
  state.rows.clear();
  state.unplaced = null;
  document.getElementById("totals").textContent =
    `${fmt(t.total.nodes)} nodes · ${fmt(t.total.gpus)} GPUs · ${fmt(t.total.switches)} switches · ${fmt(t.total.domains)} domains · snapshot ${t.snapshot}`;
  const tree = document.getElementById("tree");
  fill(tree, { children: t.children, nodes: [] });
  if (t.nodes.length) tree.append(unplacedGroup(t));
  // A few roots are opened at once: the first level is what one wants
  // to see, and it is small.
  if (t.children.length <= 4) for (const r of t.children) await toggle(r.id, true);
}

// reveal opens the tree along path (top down) and highlights the last
// row, or the node when one is given.
async function reveal(path, node) {
  document.querySelectorAll(".row.hl, .cell.hl").forEach((r) => r.classList.remove("hl"));
  for (const p of path) await toggle(p.id, true);
  if (node && !path.length && state.unplaced) state.unplaced(true);
  const key = node ? "n:" + node : "s:" + (path.length ? path[path.length - 1].id : "");
  const e = state.rows.get(key);
  if (e) {
    e.row.classList.add("hl");
    e.row.scrollIntoView({ block: "center" });
  }
  const leaf = path.length ? path[path.length - 1].id : "";
  document.querySelector(`.cell[data-id="${CSS.escape(leaf)}"]`)?.classList.add("hl");
  document.getElementById("path").textContent = [...path.map((p) => p.name), node].filter(Boolean).join(" › ");
}

async function showPath(node) {
  const r = await api("/v1/nodes/" + encodeURIComponent(node));
  await reveal(r.path.slice().reverse(), node);
}

async function search(q) {
  const hits = document.getElementById("hits");
  hits.replaceChildren();
  if (!q) return;
  const r = await api("/v1/find?q=" + encodeURIComponent(q));
  if (!r.hits.length) {
    hits.append(el("p", { class: "muted" }, `nothing matches “${q}”`));
    return;
  }
  const go = (h) => reveal(h.path, h.kind === "node" ? h.id : null).catch(showError);
  if (r.hits.length > 1) {
    hits.append(el("ul", { class: "hits" }, ...r.hits.map((h) =>
      el("li", {}, el("a", { onclick: () => go(h) }, `${h.kind} ${h.name}`), el("span", { class: "muted" }, ` (${h.match})`)))));
  }
  await go(r.hits[0]);
}

// statusKey is what, in a status answer, makes the views stale: the
// current snapshot and the held-back one.
const statusKey = (s) => `${s.current ? s.current.id : ""}/${s.pending ? s.pending.id : ""}`;

async function loadStatus(given) {
  const s = given || await api("/v1/status");
  state.statusKey = statusKey(s);
  document.body.dataset.snapshot = s.current ? s.current.id : "";
  document.body.dataset.pending = s.pending ? s.pending.id : "";
  // Each engine with what its last publish left out or why it failed:
  // nothing is lost silently.
  const results = new Map(((s.lastRun && s.lastRun.engines) || []).map((r) => [r.engine, r]));
  const engines = s.engines.map((e) => {
    const r = results.get(e);
    if (!r) return e;
    if (r.error) return `${e} (failed: ${r.error})`;
    return r.uncovered ? `${e} (${fmt(r.uncovered)} nodes not covered)` : e;
  });
  document.getElementById("status").textContent =
    `provider ${s.provider} · engines ${engines.join(", ") || "none"} · ` + (s.current ? `snapshot ${s.current.id} at ${when(s.current.createdAt)}` : "no topology yet");
  const p = document.getElementById("pending");
  p.hidden = !s.pending;
  if (s.pending) {
    p.replaceChildren(`Snapshot ${s.pending.id} is held back: ${s.pending.reason || "it shrinks the cluster"}. The current topology stays published until an operator accepts it: `,
      el("code", {}, s.accept));
  }
}

async function loadHeat() {
  const h = await api("/v1/heatmap");
  document.getElementById("heat-summary").textContent =
    `${fmt(h.free)} of ${fmt(h.gpus)} GPUs free · ${fmt(h.records)} ledger records · ${h.leaves.length} leaf switches`;
  const box = document.getElementById("heatmap");
  box.replaceChildren();
  for (const c of h.leaves) {
    const o = c.occupancy;
    const g = o.gpus || 1;
    const a = Math.round((100 * o.allocated) / g), u = Math.round((100 * o.unallocated) / g);
    const cell = el("div", { class: "cell" + (o.protectedUntil ? " prot" : ""), "data-id": c.id,
      title: `${c.name}: ${c.nodes} nodes, ${o.allocated} allocated, ${o.unallocated} unallocated, ${o.free} free of ${o.gpus} GPUs` + protText(o),
      style: `background: linear-gradient(to top, var(--alloc) ${a}%, var(--unalloc) ${a}% ${a + u}%, var(--free) ${a + u}%)` });
    cell.addEventListener("click", () => api("/v1/switches/" + encodeURIComponent(c.id)).then((s) =>
      reveal([...s.path.slice().reverse(), { id: s.switch.id, name: s.switch.name }])).catch(showError));
    box.append(cell);
  }
}

async function loadSnapshots() {
  const r = await api("/v1/snapshots?limit=20");
  const body = document.querySelector("#snapshots tbody");
  body.replaceChildren();
  const from = document.getElementById("diff-from"), to = document.getElementById("diff-to");
  from.replaceChildren(); to.replaceChildren();
  for (const s of r.snapshots) {
    body.append(el("tr", { "data-id": s.id }, el("td", {}, String(s.id)), el("td", {}, when(s.createdAt)),
      el("td", {}, s.trigger), el("td", {}, s.status + (s.reason ? ": " + s.reason : "")), el("td", {}, fmt(s.counts.nodes))));
    from.append(el("option", { value: s.id }, String(s.id)));
    to.append(el("option", { value: s.id }, String(s.id)));
  }
  if (r.snapshots.length > 1) from.value = r.snapshots[1].id;
}

const place2 = (p) => [p.leaf, p.domain].filter(Boolean).join("/") || "—";

// diffShown is how many entries of each diff list the page asks for and
// shows; the counts come from the diff's summary, which is complete.
const diffShown = 50;

function capped(title, items, total, show) {
  if (!items || !items.length) return null;
  return el("details", { open: "" }, el("summary", {}, `${title}: ${fmt(total)}`),
    el("ul", {}, ...items.map((i) => el("li", {}, show(i)))),
    total > items.length ? el("p", { class: "muted" }, `… ${fmt(total - items.length)} more`) : null);
}

async function diff(from, to) {
  const d = await api(`/v1/diff?from=${from}&to=${to}&limit=${diffShown}`);
  const s = d.summary;
  const out = document.getElementById("diff");
  const parts = Object.entries(s).filter(([, v]) => v > 0).map(([k, v]) => `${fmt(v)} ${diffLabel(k, v)}`);
  const list = (title, key, show) => capped(title, d[key], s[key], show);
  out.replaceChildren(...[el("p", { class: "diff-summary" }, `${from} → ${to}: ` + (parts.length ? parts.join(", ") : "no change")),
    list("nodes moved", "nodesMoved", (m) => `${m.name}: ${place2(m.from)} → ${place2(m.to)}`),
    list("nodes added", "nodesAdded", (n) => n),
    list("nodes removed", "nodesRemoved", (n) => n),
    list("switches added", "switchesAdded", (n) => n),
    list("switches removed", "switchesRemoved", (n) => n),
    list("switches changed", "switchesChanged", (c) => c.id || JSON.stringify(c)),
    list("domains added", "domainsAdded", (n) => n),
    list("domains removed", "domainsRemoved", (n) => n),
    list("domains changed", "domainsChanged", (n) => n),
    d.truncated ? el("p", { class: "muted" }, "lists are capped; the counts are complete") : null].filter(Boolean));
}

// diffLabel names a diff count: "nodesAdded" is "nodes added", or "node
// added" for one.
const diffNouns = { nodes: ["node", "nodes"], switches: ["switch", "switches"], domains: ["domain", "domains"] };
function diffLabel(key, n) {
  const m = key.match(/^(nodes|switches|domains)([A-Z][a-z]+)$/);
  return m ? `${diffNouns[m[1]][n === 1 ? 0 : 1]} ${m[2].toLowerCase()}` : key;
}

async function loadAccounts() {
  const f = await api("/v1/fairshare").catch(() => null);
  const list = document.getElementById("accounts");
  list.replaceChildren();
  for (const a of (f && f.accounts) || []) if (a.leaf) list.append(el("option", { value: a.account }));
}

async function place(ev) {
  ev.preventDefault();
  const req = {
    account: document.getElementById("place-account").value,
    gpus: Number(document.getElementById("place-gpus").value),
    duration: Math.round(Number(document.getElementById("place-hours").value) * 3600e9),
  };
  const within = document.getElementById("place-within").value;
  if (within) req.within = within;
  const r = await api("/v1/placements", { method: "POST", body: JSON.stringify(req) });
  const box = document.getElementById("placement");
  state.candidates = new Set();
  document.querySelectorAll(".row.cand").forEach((x) => x.classList.remove("cand"));
  const items = r.candidates.map((c) => {
    const s = c.scores;
    return el("li", { "data-group": c.group },
      el("a", { onclick: () => highlight(c).catch(showError) }, `#${c.rank} ${c.class} in ${c.group || "the cluster"}`),
      el("div", { class: "why" }, `${c.nodes.length} nodes · spans ${s.leavesSpanned} leaves and ${s.domainsSpanned} domains under ${s.lcaSwitch || "—"} (level ${s.lcaLevel}) · leaves ${fmt(s.residualFree)} GPUs free · whole free domains ${s.wholeFreeDomainsBefore} → ${s.wholeFreeDomainsAfter}, switches ${s.wholeFreeSwitchesBefore} → ${s.wholeFreeSwitchesAfter}` +
        (c.victims && c.victims.length ? ` · preempts ${c.victims.map((v) => v.workload).join(", ")}` : "")));
  });
  box.replaceChildren(
    el("p", {}, `${r.request.account}: ${r.allocated ? "allocated" : "unallocated"} work, fair-share standing ${Number(r.standing.fairShare).toFixed(3)} → ${Number(r.standingAfter.fairShare).toFixed(3)} after`),
    items.length ? el("ol", { class: "cands" }, ...items) : el("p", { class: "muted" }, "no candidate fits now"));
  if (r.candidates.length) await highlight(r.candidates[0]);
}

// highlight marks a candidate's nodes and the switches above them and
// opens the tree at its first node.
async function highlight(c) {
  state.candidates = new Set(c.nodes.map((n) => "n:" + n.node));
  document.querySelectorAll(".row.cand").forEach((x) => x.classList.remove("cand"));
  if (!c.nodes.length) return;
  const r = await api("/v1/nodes/" + encodeURIComponent(c.nodes[0].node));
  for (const p of r.path) state.candidates.add(p.id);
  await reveal(r.path.slice().reverse(), c.nodes[0].node);
  for (const key of state.candidates) state.rows.get(key.startsWith("n:") ? key : "s:" + key)?.row.classList.add("cand");
}

function tabs() {
  for (const b of document.querySelectorAll(".tabs button")) {
    b.addEventListener("click", () => {
      for (const o of document.querySelectorAll(".tabs button")) o.classList.toggle("active", o === b);
      for (const t of document.querySelectorAll(".tab")) t.hidden = t.id !== "tab-" + b.dataset.tab;
    });
  }
}

// watch polls GET /v1/status every 5 s and reloads the views when a new
// snapshot, or one held back by the shrink guard, appears. Polling, not
// Server-Sent Events: an EventSource cannot send the bearer token the API
// may require, and the status answer is small and cheap to make.
function watch() {
  if (state.watching) return;
  state.watching = true;
  setInterval(async () => {
    try {
      const s = await api("/v1/status");
      if (statusKey(s) === state.statusKey) return;
      await loadStatus(s);
      await loadTree();
      await Promise.all([loadHeat(), loadSnapshots()]);
    } catch (e) {
      showError(e);
    }
  }, 5000);
}

async function main() {
  tabs();
  document.getElementById("token-button").addEventListener("click", () => askToken().then((ok) => ok && main()));
  document.getElementById("token-cancel").addEventListener("click", () => document.getElementById("token-dialog").close("cancel"));
  document.getElementById("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = document.getElementById("search").value.trim();
    history.replaceState(null, "", q ? "?q=" + encodeURIComponent(q) : location.pathname);
    search(q).catch(showError);
  });
  document.getElementById("diff-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    diff(document.getElementById("diff-from").value, document.getElementById("diff-to").value).catch(showError);
  });
  document.getElementById("place-form").addEventListener("submit", (ev) => place(ev).catch(showError));
  try {
    await loadStatus();
    await loadTree();
    await Promise.all([loadHeat(), loadSnapshots(), loadAccounts()]);
    const q = new URLSearchParams(location.search).get("q");
    if (q) {
      document.getElementById("search").value = q;
      await search(q);
    }
    showError(null);
    document.body.dataset.ready = "true";
    watch();
  } catch (e) {
    showError(e);
    document.body.dataset.ready = "error";
  }
}

main();
