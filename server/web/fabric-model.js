// The fabric as the drawing uses it: GET /v1/fabric turned into flat
// arrays in fabric order, each switch with the span of slots it covers,
// the occupancy of GET /v1/fabric/occupancy, and, between two snapshots,
// the union of both with each change marked.

// Marks of a node or switch between two snapshots.
export const MARK = { none: 0, added: 1, removed: 2, moved: 3, changed: 4 };

// raw turns a GET /v1/fabric answer into switches with their parent's ID,
// each with its nodes as lists (names, GPUs, domain and sub-domain IDs),
// and the nodes under no switch. The answer's own arrays are kept: no
// object is made per node.
export function raw(doc) {
  const ids = (list, idx) => (idx ? idx.map((i) => (i >= 0 ? list[i].id : "")) : null);
  const nodesOf = (s) => ({
    names: s.nodes || [], gpus: s.gpus ?? 0, dom: ids(doc.domains, s.domain), sub: ids(doc.subDomains, s.subDomain), mark: null,
  });
  const switches = doc.switches.map((s) => ({
    id: s.id, name: s.displayName || s.name, level: s.level, mark: 0,
    parent: s.parent >= 0 ? doc.switches[s.parent].id : "", nodes: nodesOf(s),
  }));
  const domainNames = new Map(doc.domains.map((d) => [d.id, d.name]));
  return { snapshot: doc.snapshot, counts: doc.counts, switches, unplaced: nodesOf(doc.unplaced || {}), domainNames };
}

// flat lists every node of a raw fabric (in order) with its switch's ID
// ("" for none), GPUs, domain and sub-domain.
function flat(r) {
  const out = { names: [], leaf: [], gpus: [], dom: [], sub: [] };
  const add = (l, id) => {
    for (let k = 0; k < l.names.length; k++) {
      out.names.push(l.names[k]);
      out.leaf.push(id);
      out.gpus.push(typeof l.gpus === "number" ? l.gpus : l.gpus[k]);
      out.dom.push(l.dom ? l.dom[k] : "");
      out.sub.push(l.sub ? l.sub[k] : "");
    }
  };
  for (const s of r.switches) add(s.nodes, s.id);
  add(r.unplaced, "");
  return out;
}

// union merges the raw fabrics of two snapshots: everything of "to" in its
// place, and what only "from" has (removed switches and nodes) where it
// was; every node and switch is marked added, removed, moved or changed.
export function union(from, to) {
  const a = flat(from);
  const was = new Map();
  for (let k = 0; k < a.names.length; k++) was.set(a.names[k], k);
  const kept = new Uint8Array(a.names.length);
  // marked adds to a node list of "to" its marks, and the nodes "from"
  // had there that "to" has nowhere (removed) after them.
  const marked = (l, leaf) => {
    const mark = new Array(l.names.length);
    for (let k = 0; k < l.names.length; k++) {
      const i = was.get(l.names[k]);
      if (i === undefined) mark[k] = MARK.added;
      else {
        kept[i] = 1;
        const dom = l.dom ? l.dom[k] : "", sub = l.sub ? l.sub[k] : "";
        mark[k] = a.leaf[i] !== leaf || a.dom[i] !== dom || a.sub[i] !== sub ? MARK.moved : MARK.none;
      }
    }
    return { names: l.names, gpus: l.gpus, dom: l.dom, sub: l.sub, mark, leaf };
  };
  const fromSw = new Map(from.switches.map((s) => [s.id, s]));
  const toSw = new Map(to.switches.map((s) => [s.id, s]));
  const lists = to.switches.map((s) => marked(s.nodes, s.id));
  const unplaced = marked(to.unplaced, "");
  const removedAt = new Map();
  for (let i = 0; i < a.names.length; i++) {
    if (kept[i]) continue;
    if (!removedAt.has(a.leaf[i])) removedAt.set(a.leaf[i], []);
    removedAt.get(a.leaf[i]).push(i);
  }
  // withRemoved appends the removed nodes of leaf to list l.
  const withRemoved = (l) => {
    const gone = removedAt.get(l.leaf) || [];
    if (!gone.length) return l;
    const n = l.names.length;
    const pick = (own, fromList) => (own ? Array.from({ length: n }, (_, k) => (typeof own === "number" ? own : own[k])) : new Array(n).fill(""))
      .concat(gone.map((i) => fromList[i]));
    return {
      names: l.names.concat(gone.map((i) => a.names[i])), gpus: pick(l.gpus, a.gpus), dom: pick(l.dom, a.dom), sub: pick(l.sub, a.sub),
      mark: l.mark.concat(gone.map(() => MARK.removed)),
    };
  };
  const switches = to.switches.map((s, k) => {
    const old = fromSw.get(s.id);
    let mark = MARK.none;
    if (!old) mark = MARK.added;
    else if (old.parent !== s.parent || old.level !== s.level || old.name !== s.name) mark = MARK.changed;
    return Object.assign({}, s, { mark, nodes: withRemoved(lists[k]) });
  });
  for (const s of from.switches) {
    if (!toSw.has(s.id)) {
      switches.push(Object.assign({}, s, { mark: MARK.removed, nodes: withRemoved({ names: [], gpus: [], dom: null, sub: null, mark: [], leaf: s.id }) }));
    }
  }
  return {
    snapshot: to.snapshot, counts: to.counts, switches, domainNames: new Map([...from.domainNames, ...to.domainNames]),
    unplaced: withRemoved(unplaced),
  };
}

// build lays a raw fabric out: switches depth first from the roots (the
// nodes under no switch as a last group of their own), each with the
// slots it spans (one per node below it, one for a switch with none).
export function build(r) {
  const n = r.switches.reduce((k, s) => k + s.nodes.names.length, 0) + r.unplaced.names.length;
  const byId = new Map();
  const sw = [];
  const kids = new Map();
  for (const s of r.switches) kids.set(s.id, []);
  const roots = [];
  for (const s of r.switches) {
    if (s.parent && kids.has(s.parent)) kids.get(s.parent).push(s);
    else roots.push(s);
  }
  const names = new Array(n), sub = new Array(n);
  const gpus = new Int32Array(n), dom = new Int32Array(n), leaf = new Int32Array(n), mark = new Uint8Array(n), slot = new Float64Array(n);
  const domIndex = new Map();
  const domains = [];
  let next = 0, count = 0, maxDepth = 0;
  const visit = (s, parent, depth) => {
    const i = sw.length;
    const e = { id: s.id, name: s.name, level: s.level, parent, depth, children: [], start: next, end: next,
      first: count, last: count, mark: s.mark || 0, unplaced: !!s.unplaced };
    sw.push(e);
    byId.set(s.id, i);
    maxDepth = Math.max(maxDepth, depth);
    const l = s.nodes;
    const g = l.gpus;
    for (let k = 0; k < l.names.length; k++, count++) {
      names[count] = l.names[k];
      gpus[count] = typeof g === "number" ? g : g[k];
      let d = -1;
      const id = l.dom ? l.dom[k] : "";
      if (id) {
        d = domIndex.get(id);
        if (d === undefined) {
          d = domains.length;
          domIndex.set(id, d);
          domains.push({ id, name: r.domainNames.get(id) || id });
        }
      }
      dom[count] = d;
      sub[count] = l.sub ? l.sub[k] : "";
      leaf[count] = i;
      mark[count] = l.mark ? l.mark[k] : 0;
      slot[count] = next++;
    }
    for (const c of kids.get(s.id) || []) {
      e.children.push(sw.length);
      visit(c, i, depth + 1);
    }
    if (next === e.start) next++; // a switch with nothing below keeps a slot
    e.end = next;
    e.last = count;
  };
  for (const s of roots) visit(s, -1, 0);
  const switchCount = sw.length;
  if (r.unplaced.names.length) visit({ id: "", name: "not placed", level: 0, nodes: r.unplaced, unplaced: true }, -1, 0);
  const m = {
    snapshot: r.snapshot, counts: r.counts, sw, byId, switchCount, maxDepth, slots: next, domains,
    names, gpus, dom, sub, leaf, mark, slot,
    alloc: new Int32Array(n), unalloc: new Int32Array(n), acct: new Int16Array(n).fill(-1), prot: new Uint8Array(n),
    accounts: [], runs: domainRuns(sw, dom, slot),
  };
  // the nodes by name, made when first asked for (a search, a candidate)
  let index = null;
  Object.defineProperty(m, "index", { get: () => index || (index = new Map(names.map((x, k) => [x, k]))) });
  m.byDepth = [];
  for (let d = 0; d <= maxDepth; d++) m.byDepth.push([]);
  sw.forEach((s, i) => m.byDepth[s.depth].push(i));
  sumBelow(m);
  return m;
}

// domainRuns lists, per switch, the runs of consecutive nodes of one
// domain: a domain is outlined once per leaf that holds some of it.
function domainRuns(sw, dom, slot) {
  const runs = [];
  for (const s of sw) {
    let i = s.first;
    // only the switch's own nodes: those before its first child's
    const own = s.children.length ? sw[s.children[0]].first : s.last;
    while (i < own) {
      const d = dom[i];
      let j = i + 1;
      while (j < own && dom[j] === d) j++;
      if (d >= 0) runs.push({ dom: d, a: slot[i], b: slot[j - 1] + 1 });
      i = j;
    }
  }
  return runs;
}

// occupy fills the model's occupancy from GET /v1/fabric/occupancy, whose
// indexes follow the fabric order of order (the node names of the
// snapshot it was made for; null when the model was built from that
// snapshot alone, whose order is the model's).
export function occupy(m, occ, order) {
  m.alloc.fill(0);
  m.unalloc.fill(0);
  m.acct.fill(-1);
  m.prot.fill(0);
  m.accounts = occ.accounts || [];
  for (const [k, a, u, acct, prot] of occ.held || []) {
    const i = order ? m.index.get(order[k]) : k;
    if (i === undefined) continue;
    m.alloc[i] = a;
    m.unalloc[i] = u;
    m.acct[i] = acct;
    m.prot[i] = prot;
  }
  sumBelow(m);
}

// sumBelow totals, per switch, the GPUs below it and how they are held.
function sumBelow(m) {
  for (const s of m.sw) {
    let g = 0, a = 0, u = 0, p = 0, c = 0, k = 0;
    for (let i = s.first; i < s.last; i++) {
      g += m.gpus[i];
      a += m.alloc[i];
      u += m.unalloc[i];
      p += m.prot[i];
      if (m.mark[i]) {
        c++;
        k = k === MARK.removed ? k : m.mark[i];
      }
    }
    // changed counts the marked nodes below; markBelow is the mark shown
    // for them (removed first).
    Object.assign(s, { gpus: g, alloc: a, unalloc: u, prot: p, nodes: s.last - s.first, changed: c, markBelow: k });
  }
}

// nodeAt returns the node whose slot is s, or -1.
export function nodeAt(m, s) {
  let lo = 0, hi = m.names.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = m.slot[mid];
    if (v === s) return mid;
    if (v < s) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

// switchAt returns the switch at depth d whose span holds slot s, or -1.
export function switchAt(m, d, s) {
  const list = m.byDepth[d] || [];
  let lo = 0, hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const e = m.sw[list[mid]];
    if (s < e.start) hi = mid - 1;
    else if (s >= e.end) lo = mid + 1;
    else return list[mid];
  }
  return -1;
}

// pathOf returns the switches from the top down to switch i.
export function pathOf(m, i) {
  const out = [];
  for (let k = i; k >= 0; k = m.sw[k].parent) out.unshift(k);
  return out;
}
