// The drawn fabric: loads GET /v1/fabric and its occupancy, draws them,
// zooms into a switch (click, or the keyboard), opens a node's details,
// and shows a search hit, placement candidates or the changes between
// two snapshots on the picture. What the canvas shows is also written as
// text (a summary, and the focused cell in an aria-live region), and as
// data attributes of the canvas.

import { raw, union, build, occupy, nodeAt, switchAt, pathOf, MARK } from "./fabric-model.js";
import { geometry, draw, patterns, ROW } from "./fabric-draw.js";
import { api, el, fmt } from "./api.js";
import { keyed, describeSwitch, describeNode, summary, legend } from "./fabric-text.js";

export class Fabric {
  constructor(hooks) {
    this.hooks = hooks;
    this.canvas = document.getElementById("fabric");
    this.ctx = this.canvas.getContext("2d");
    this.pat = patterns(this.ctx);
    this.m = null;
    this.view = { a: 0, b: 1 };
    this.zoom = -1;
    this.path = new Set();
    this.hlNode = -1;
    this.cand = { nodes: new Set(), switches: new Set(), hover: false };
    this.primary = null;
    this.focus = { sw: -1, node: -1 };
    this.byAccount = false;
    this.changes = null;
    // seq numbers each load and comparison: one whose answers arrive
    // after a later one began is dropped, so that a reload the status
    // poll started cannot replace a comparison opened meanwhile.
    this.seq = 0;
    this.canvas.addEventListener("click", (ev) => this.click(ev));
    this.canvas.addEventListener("mousemove", (ev) => this.hover(ev));
    this.canvas.addEventListener("keydown", (ev) => keyed(this, ev));
    document.getElementById("by-account").addEventListener("change", (ev) => {
      this.byAccount = ev.target.checked;
      this.redraw();
    });
    document.getElementById("zoom-out").addEventListener("click", () => this.zoomOut());
    document.getElementById("changes-back").addEventListener("click", () => this.load().catch(hooks.onError));
    document.getElementById("changes-next").addEventListener("click", () => this.nextChange());
    new ResizeObserver(() => this.m && this.redraw()).observe(this.canvas.parentElement);
  }

  // load draws the current topology with its occupancy.
  async load() {
    const seq = ++this.seq;
    const t0 = performance.now();
    const [doc, occ] = await Promise.all([api("/v1/fabric"), api("/v1/fabric/occupancy")]);
    if (seq !== this.seq) return;
    const t1 = performance.now();
    const m = build(raw(doc));
    if (occ.snapshot === doc.snapshot) occupy(m, occ, null);
    const t2 = performance.now();
    this.changes = null;
    document.getElementById("fabric-changes").hidden = true;
    this.set(m);
    const t3 = performance.now();
    Object.assign(this.canvas.dataset, {
      fetchMs: (t1 - t0).toFixed(1), buildMs: (t2 - t1).toFixed(1), firstDrawMs: (t3 - t0).toFixed(1), mode: "current",
    });
  }

  // set shows model m from the top, keeping a search hit or candidate
  // that is still in it.
  set(m) {
    const keep = this.primary;
    this.m = m;
    this.path = new Set();
    this.hlNode = -1;
    this.cand = { nodes: new Set(), switches: new Set(), hover: false };
    this.primary = null;
    this.focus = { sw: -1, node: -1 };
    const ds = this.canvas.dataset;
    ds.switches = String(m.switchCount);
    ds.nodes = String(m.names.length);
    ds.domains = String(m.domains.length);
    ds.unplaced = String(m.sw.filter((s) => s.unplaced).reduce((n, s) => n + s.nodes, 0));
    ds.highlight = "";
    ds.outlined = "";
    this.say("");
    this.zoomTo(-1, false);
    if (keep && !this.changes) this.candidate(keep, false);
  }

  redraw() {
    if (!this.m) return;
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.parentElement.clientWidth;
    const h = (this.m.maxDepth + 1) * ROW + 20 + 180;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.width = w + "px";
      this.canvas.style.height = h + "px";
    }
    const t = performance.now();
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.g = geometry(this.m, this.view, w, h);
    draw(this.ctx, this.m, this.g, this.pat, {
      path: this.path, hlNode: this.hlNode, cand: this.cand, focus: this.focus, byAccount: this.byAccount, changes: !!this.changes,
    });
    this.canvas.dataset.drawMs = (performance.now() - t).toFixed(1);
    this.canvas.dataset.draws = String(Number(this.canvas.dataset.draws || 0) + 1);
    legend(this);
  }

  // zoomTo shows switch i across the width (-1: everything).
  zoomTo(i, announce = true) {
    const m = this.m;
    this.zoom = i;
    this.view = i >= 0 ? { a: m.sw[i].start, b: m.sw[i].end } : { a: 0, b: Math.max(m.slots, 1) };
    this.canvas.dataset.zoom = i >= 0 ? m.sw[i].id : "";
    const crumbs = document.getElementById("fabric-crumbs");
    crumbs.replaceChildren(el("button", { type: "button", onclick: () => this.zoomTo(-1) }, "all"),
      ...(i >= 0 ? pathOf(m, i) : []).map((k) => el("button", { type: "button", onclick: () => this.zoomTo(k) }, "› " + m.sw[k].name)));
    this.redraw();
    summary(this);
    if (announce && i >= 0) this.say(describeSwitch(this, i));
  }

  zoomOut() {
    if (this.zoom >= 0) this.zoomTo(this.m.sw[this.zoom].parent);
  }

  // hit returns the switch or node under a point of the canvas.
  hit(ev) {
    if (!this.g) return null;
    const r = this.canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    const s = this.g.slot(x);
    if (y < this.g.rows * ROW) {
      const i = switchAt(this.m, Math.floor(y / ROW), s);
      return i >= 0 ? { sw: i } : null;
    }
    if (y >= this.g.stripTop) {
      const i = nodeAt(this.m, Math.floor(s));
      return i >= 0 ? { node: i } : null;
    }
    return null;
  }

  click(ev) {
    const h = this.hit(ev);
    if (!h) return;
    if (h.sw !== undefined) {
      this.focus = { sw: h.sw, node: -1 };
      this.zoomTo(h.sw === this.zoom ? this.m.sw[h.sw].parent : h.sw);
    } else this.open(h.node);
  }

  hover(ev) {
    const h = this.hit(ev);
    this.canvas.title = !h ? "" : h.sw !== undefined ? describeSwitch(this, h.sw) : describeNode(this, h.node);
  }

  // open focuses node i and says its details; for the current topology
  // also what GET /v1/nodes knows of it.
  open(i) {
    this.focus = { sw: -1, node: i };
    this.redraw();
    const name = this.m.names[i];
    const box = document.getElementById("fabric-details");
    box.hidden = false;
    box.replaceChildren(el("strong", {}, name), " " + describeNode(this, i) + " ",
      el("button", { type: "button", onclick: () => this.hooks.onNode(name) }, "show in the tree"));
    this.say(describeNode(this, i));
    if (this.changes || this.m.mark[i] === MARK.removed) return;
    api("/v1/nodes/" + encodeURIComponent(name)).then((r) => {
      const n = r.node || {};
      const more = [n.instanceID && "instance " + n.instanceID, n.region && n.zone && n.region + "/" + n.zone].filter(Boolean).join(" · ");
      if (more) box.append(el("span", { class: "muted" }, " " + more));
    }).catch(() => {});
  }

  // focusOn moves the keyboard focus to switch sw or node, zooming out
  // to its parent when it is off the picture.
  focusOn(f) {
    const m = this.m;
    this.focus = { sw: f.sw ?? -1, node: f.node ?? -1 };
    const i = this.focus.sw >= 0 ? this.focus.sw : m.leaf[this.focus.node];
    const span = this.focus.sw >= 0 ? m.sw[i] : { start: m.slot[f.node], end: m.slot[f.node] + 1 };
    if (span.start < this.view.a || span.end > this.view.b) this.zoomTo(this.focus.sw >= 0 ? m.sw[i].parent : i, false);
    else this.redraw();
    this.say(this.focus.sw >= 0 ? describeSwitch(this, i) : describeNode(this, f.node));
  }

  say(text) {
    document.getElementById("fabric-focus").textContent = text;
  }

  // highlight marks the path to a search hit (switch IDs from the top)
  // and its node, and zooms into its leaf.
  highlight(path, node) {
    const m = this.m;
    if (!m) return;
    this.path = new Set(path.map((p) => m.byId.get(p.id)).filter((i) => i !== undefined));
    this.hlNode = node ? m.index.get(node) ?? -1 : -1;
    let leaf = path.length ? m.byId.get(path[path.length - 1].id) : undefined;
    if (leaf === undefined && this.hlNode >= 0) leaf = m.leaf[this.hlNode];
    this.canvas.dataset.highlight = leaf !== undefined ? m.sw[leaf].id : "";
    this.canvas.dataset.highlightNode = node || "";
    if (leaf !== undefined) this.zoomTo(leaf, false);
    else this.redraw();
    if (this.hlNode >= 0) this.say("found " + describeNode(this, this.hlNode));
  }

  // candidate outlines a placement candidate's nodes and the switches
  // above them (hover: a dashed outline, until the pointer leaves) and
  // zooms to its lowest common switch.
  candidate(c, hover) {
    const m = this.m;
    if (!m || this.changes) return;
    if (!hover) this.primary = c;
    this.path = new Set();
    this.hlNode = -1;
    const nodes = new Set(), switches = new Set();
    for (const n of c.nodes) {
      const i = m.index.get(n.node);
      if (i === undefined) continue;
      nodes.add(i);
      for (const k of pathOf(m, m.leaf[i])) switches.add(k);
    }
    this.cand = { nodes, switches, hover };
    this.canvas.dataset.outlined = c.nodes.map((n) => n.node).join(",");
    this.canvas.dataset.outlinedRank = String(c.rank);
    const lca = m.byId.get(c.scores && c.scores.lcaSwitch);
    const first = nodes.size ? m.leaf[nodes.values().next().value] : -1;
    this.zoomTo(lca !== undefined ? lca : first >= 0 ? m.sw[first].parent : -1, false);
    const cap = document.getElementById("fabric-caption");
    cap.hidden = false;
    cap.replaceChildren(el("strong", {}, `${hover ? "candidate" : "first candidate"} #${c.rank}`), " " + this.hooks.explain(c));
    this.say(`${hover ? "candidate" : "first candidate"} #${c.rank} outlined: ${this.hooks.explain(c)}`);
  }

  // uncandidate goes back from a hovered candidate to the first one.
  uncandidate() {
    if (this.primary) this.candidate(this.primary, false);
  }

  // nextChange zooms into the next leaf that holds a change, after the
  // one shown, and focuses its first changed node.
  nextChange() {
    const m = this.m;
    const from = this.zoom >= 0 ? m.sw[this.zoom].last : 0;
    for (let k = 0; k < m.names.length; k++) {
      const i = (from + k) % m.names.length;
      if (!m.mark[i]) continue;
      this.zoomTo(m.leaf[i], false);
      this.focusOn({ node: i });
      return;
    }
  }

  // showChanges draws the union of two snapshots with what was added,
  // removed and moved marked; pending names a held-back snapshot, with
  // the button that accepts it.
  async showChanges(from, to, pending) {
    const t0 = performance.now();
    const seq = ++this.seq;
    const [a, b] = await Promise.all([api("/v1/fabric?snapshot=" + from), api("/v1/fabric?snapshot=" + to)]);
    if (seq !== this.seq) return;
    this.changes = { from, to };
    const m = build(union(raw(a), raw(b)));
    this.set(m);
    const names = (k) => m.names.filter((_, i) => m.mark[i] === k);
    const ids = (k) => m.sw.filter((s) => s.mark === k).map((s) => s.id);
    const marked = {
      added: names(MARK.added), removed: names(MARK.removed), moved: names(MARK.moved),
      switchesAdded: ids(MARK.added), switchesRemoved: ids(MARK.removed), switchesChanged: ids(MARK.changed),
    };
    Object.assign(this.canvas.dataset, {
      mode: "changes", from: String(from), to: String(to), added: marked.added.join(","), removed: marked.removed.join(","),
      moved: marked.moved.join(","), switchesAdded: marked.switchesAdded.join(","), switchesRemoved: marked.switchesRemoved.join(","),
      changesMs: (performance.now() - t0).toFixed(1),
    });
    const bar = document.getElementById("fabric-changes");
    bar.hidden = false;
    const count = (n, what) => `${fmt(n)} ${what}`;
    const text = `${from} → ${to}: ` + [count(marked.added.length, "nodes added (+)"), count(marked.removed.length, "removed (×)"),
      count(marked.moved.length, "moved (→)"), count(marked.switchesAdded.length, "switches added"),
      count(marked.switchesRemoved.length, "switches removed"), count(marked.switchesChanged.length, "switches changed (~)")].join(", ");
    document.getElementById("changes-text").textContent = text;
    const acc = document.getElementById("changes-accept");
    acc.hidden = !pending;
    acc.onclick = pending ? () => this.hooks.accept(pending) : null;
    if (pending) document.getElementById("changes-text").prepend(`Snapshot ${pending.id} is held back: ${pending.reason || "it shrinks the cluster"}. Accepting it makes these changes. `);
    summary(this);
  }
}
