// toposcope's web view: the drawn fabric, the switch tree, occupancy,
// snapshots and placement, read from the service's own REST API (same
// origin). Every text from the API is set as text, never as markup.

import { state, el, fmt, when, api, askToken, showError } from "./api.js";
import { Fabric } from "./fabric.js";
import { loadSnapshots, diff, pendingBanner, loadAccounts, explain, place, accept } from "./panels.js";

state.rows = new Map();
state.candidates = new Set();

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
  const row = el("div", { class: "row switch", "data-id": s.id, tabindex: "0", role: "treeitem" },
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
  const row = el("div", { class: "row node", "data-node": n.name, tabindex: "0", role: "treeitem" },
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
  const row = el("div", { class: "row unplaced", "data-id": "", tabindex: "0", role: "treeitem" },
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
// row, or the node when one is given; unless draw is false, also on the
// fabric.
async function reveal(path, node, draw = true) {
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
  if (draw) view.fabric.highlight(path, node);
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
  pendingBanner(view, s);
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

// candidate marks a placement candidate's nodes and the switches above
// them in the tree, opens the tree at its first node and outlines it on
// the fabric.
async function candidate(c) {
  view.fabric.candidate(c, false);
  clearCandidates();
  state.candidates = new Set(c.nodes.map((n) => "n:" + n.node));
  if (!c.nodes.length) return;
  const r = await api("/v1/nodes/" + encodeURIComponent(c.nodes[0].node));
  for (const p of r.path) state.candidates.add(p.id);
  await reveal(r.path.slice().reverse(), c.nodes[0].node, false);
  for (const key of state.candidates) state.rows.get(key.startsWith("n:") ? key : "s:" + key)?.row.classList.add("cand");
}

function clearCandidates() {
  state.candidates = new Set();
  document.querySelectorAll(".row.cand").forEach((x) => x.classList.remove("cand"));
}

// treeKeys moves through the tree's rows with the arrow keys: up and
// down to the previous or next row shown, right opens a switch, left
// closes it, Enter does what a click does.
function treeKeys(ev) {
  const row = ev.target.closest(".row");
  if (!row) return;
  const rows = [...document.querySelectorAll("#tree .row")].filter((r) => r.offsetParent !== null);
  const k = rows.indexOf(row);
  const open = row.parentElement.querySelector(":scope > ul");
  switch (ev.key) {
  case "ArrowDown": rows[k + 1]?.focus(); break;
  case "ArrowUp": rows[k - 1]?.focus(); break;
  case "ArrowRight": if (open && open.hidden) row.click(); break;
  case "ArrowLeft": if (open && !open.hidden) row.click(); break;
  case "Enter": case " ": row.click(); break;
  default: return;
  }
  ev.preventDefault();
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
      await refreshViews();
    } catch (e) {
      showError(e);
    }
  }, 5000);
}

// refreshViews reloads what depends on the current topology; a
// comparison drawn on the fabric stays until it is left.
async function refreshViews() {
  await loadTree();
  await Promise.all([loadHeat(), loadSnapshots(), view.fabric.changes ? null : view.fabric.load()]);
}

// view is what the panels reach of the page.
const view = {
  fabric: null, candidate, clearCandidates, onError: showError,
  refresh: async () => {
    await loadStatus();
    await view.fabric.load();
    await refreshViews();
  },
};

function setup() {
  tabs();
  view.fabric = new Fabric({ onNode: (n) => showPath(n).catch(showError), onError: showError, explain, accept: (p) => accept(view, p) });
  document.getElementById("tree").addEventListener("keydown", treeKeys);
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
    diff(view, document.getElementById("diff-from").value, document.getElementById("diff-to").value).catch(showError);
  });
  document.getElementById("place-form").addEventListener("submit", (ev) => place(view, ev).catch(showError));
}

async function main() {
  try {
    await loadStatus();
    // the drawing and the tree load side by side
    await Promise.all([view.fabric.load(), loadTree().then(() => Promise.all([loadHeat(), loadSnapshots(), loadAccounts()]))]);
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

setup();
main();
