// The side panels of the web view: snapshots and the diff between two of
// them (also drawn on the fabric), the held-back shrink with its accept,
// and the placement candidates (also outlined on the fabric). view holds
// the fabric and the tree's reveal and refresh.

import { api, el, fmt, when } from "./api.js";

export async function loadSnapshots() {
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

// diff lists what changed between two snapshots and draws it on the
// fabric.
export async function diff(view, from, to) {
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
  await view.fabric.showChanges(from, to, null);
}

// diffLabel names a diff count: "nodesAdded" is "nodes added", or "node
// added" for one.
const diffNouns = { nodes: ["node", "nodes"], switches: ["switch", "switches"], domains: ["domain", "domains"] };
function diffLabel(key, n) {
  const m = key.match(/^(nodes|switches|domains)([A-Z][a-z]+)$/);
  return m ? `${diffNouns[m[1]][n === 1 ? 0 : 1]} ${m[2].toLowerCase()}` : key;
}

// pendingBanner says that a shrink is held back, with the request that
// accepts it, a button that draws it on the fabric and one that accepts
// it (asking for a write token when the one given has no write scope).
export function pendingBanner(view, s) {
  const p = document.getElementById("pending");
  p.hidden = !s.pending;
  if (!s.pending) return;
  p.replaceChildren(`Snapshot ${s.pending.id} is held back: ${s.pending.reason || "it shrinks the cluster"}. The current topology stays published until an operator accepts it: `,
    el("code", {}, s.accept), " ",
    el("button", { type: "button", id: "pending-show", onclick: () => view.fabric.showChanges(s.current.id, s.pending.id, s.pending).catch(view.onError) }, "show on the fabric"),
    " ",
    el("button", { type: "button", id: "pending-accept", onclick: () => accept(view, s.pending) }, `accept snapshot ${s.pending.id}`));
}

// accept accepts the held-back snapshot p and reloads the views.
export async function accept(view, p) {
  try {
    await api(`/v1/snapshots/${p.id}/accept`, { method: "POST", write: true });
    await view.refresh();
  } catch (e) {
    view.onError(e);
  }
}

export async function loadAccounts() {
  const f = await api("/v1/fairshare").catch(() => null);
  const list = document.getElementById("accounts");
  list.replaceChildren();
  for (const a of (f && f.accounts) || []) if (a.leaf) list.append(el("option", { value: a.account }));
}

// explain says why a candidate ranks where it does.
export function explain(c) {
  const s = c.scores;
  return `${c.nodes.length} nodes · spans ${s.leavesSpanned} leaves and ${s.domainsSpanned} domains under ${s.lcaSwitch || "—"} (level ${s.lcaLevel}) · leaves ${fmt(s.residualFree)} GPUs free · whole free domains ${s.wholeFreeDomainsBefore} → ${s.wholeFreeDomainsAfter}, switches ${s.wholeFreeSwitchesBefore} → ${s.wholeFreeSwitchesAfter}` +
    (c.victims && c.victims.length ? ` · preempts ${c.victims.map((v) => v.workload).join(", ")}` : "");
}

// place ranks the candidates of the form's request, lists them with
// their explanation, outlines the first on the fabric and the others
// while the pointer is on them.
export async function place(view, ev) {
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
  view.clearCandidates();
  const items = r.candidates.map((c) => el("li", {
    "data-group": c.group, "data-rank": c.rank, tabindex: "0",
    onmouseenter: () => view.fabric.candidate(c, true), onmouseleave: () => view.fabric.uncandidate(),
    onfocus: () => view.fabric.candidate(c, true), onblur: () => view.fabric.uncandidate(),
  },
  el("a", { onclick: () => view.candidate(c).catch(view.onError) }, `#${c.rank} ${c.class} in ${c.group || "the cluster"}`),
  el("div", { class: "why" }, explain(c))));
  box.replaceChildren(
    el("p", {}, `${r.request.account}: ${r.allocated ? "allocated" : "unallocated"} work, fair-share standing ${Number(r.standing.fairShare).toFixed(3)} → ${Number(r.standingAfter.fairShare).toFixed(3)} after`),
    items.length ? el("ol", { class: "cands" }, ...items) : el("p", { class: "muted" }, "no candidate fits now"));
  if (r.candidates.length) await view.candidate(r.candidates[0]);
}
