// Drawing the fabric on a canvas: an icicle of the switch tree (a row per
// depth, each switch as wide as the nodes below it) above a band of
// nodes. Where a node is narrower than a few pixels, the nodes under
// each pixel column are drawn together, so that 100,000 nodes cost one
// pass over typed arrays. Colours are the Okabe-Ito set, which reads
// for colour-blind eyes, and each state also has its own pattern.

import { MARK } from "./fabric-model.js";

export const COLOURS = {
  alloc: "#0072B2", unalloc: "#E69F00", free: "#dfe3e9", prot: "#CC79A7", none: "#f4f5f7",
  added: "#009E73", removed: "#D55E00", moved: "#56B4E9", changed: "#56B4E9",
  hl: "#F0E442", cand: "#1d232c", sw: "#eef1f5", line: "#9aa3b0", text: "#1d232c", dom: "#4b5563",
};
export const ACCOUNT_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
const MARK_COLOUR = [null, COLOURS.added, COLOURS.removed, COLOURS.moved, COLOURS.changed];
const MARK_GLYPH = ["", "+", "×", "→", "~"];

export const ROW = 24;
// NUM writes counts; one formatter, as making one per number is slow.
const NUM = new Intl.NumberFormat("en-US");
const STRIP = 8;

// patterns returns the fill patterns of one canvas context: stripes for
// unallocated GPUs, cross-hatch for protected work and removed nodes.
export function patterns(ctx) {
  const make = (bg, fg, draw) => {
    const c = document.createElement("canvas");
    c.width = c.height = 8;
    const p = c.getContext("2d");
    p.fillStyle = bg;
    p.fillRect(0, 0, 8, 8);
    p.strokeStyle = fg;
    p.lineWidth = 1.5;
    p.beginPath();
    draw(p);
    p.stroke();
    return ctx.createPattern(c, "repeat");
  };
  const diag = (p) => { p.moveTo(0, 8); p.lineTo(8, 0); p.moveTo(-2, 2); p.lineTo(2, -2); p.moveTo(6, 10); p.lineTo(10, 6); };
  const cross = (p) => { diag(p); p.moveTo(0, 0); p.lineTo(8, 8); };
  return {
    unalloc: make(COLOURS.unalloc, "rgba(255,255,255,.75)", diag),
    prot: make(COLOURS.prot, "rgba(255,255,255,.8)", cross),
    removed: make("#fbe3d6", COLOURS.removed, cross),
  };
}

// geometry is where things are on a canvas of w by h CSS pixels showing
// slots a to b.
export function geometry(m, view, w, h) {
  const rows = m.maxDepth + 1;
  const stripTop = rows * ROW + 2;
  const bandTop = stripTop + STRIP + 2;
  return {
    w, h, a: view.a, b: view.b, rows, stripTop, bandTop, bandH: Math.max(20, h - bandTop - 2),
    px: w / (view.b - view.a),
    x(s) { return (s - this.a) * this.px; },
    slot(x) { return this.a + x / this.px; },
  };
}

// draw paints the model on ctx; o holds what is highlighted, outlined,
// focused and whether nodes are coloured by account.
export function draw(ctx, m, g, pat, o) {
  ctx.clearRect(0, 0, g.w, g.h);
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  drawSwitches(ctx, m, g, pat, o);
  if (g.px >= 2) drawNodes(ctx, m, g, pat, o);
  else drawColumns(ctx, m, g, pat, o);
  if (g.px >= 1.5) drawDomains(ctx, m, g);
  drawSeparators(ctx, m, g);
}

function drawSwitches(ctx, m, g, pat, o) {
  for (let i = 0; i < m.sw.length; i++) {
    const s = m.sw[i];
    const x0 = g.x(s.start), x1 = g.x(s.end);
    if (x1 < 0 || x0 > g.w) continue;
    const y = s.depth * ROW, w = x1 - x0;
    const inset = w >= 4 ? 1 : 0;
    ctx.fillStyle = o.path.has(i) ? COLOURS.hl : s.mark === MARK.removed ? pat.removed : COLOURS.sw;
    ctx.fillRect(x0 + inset, y + 1, Math.max(w - 2 * inset, 0.5), ROW - 2);
    // the GPUs below, held and free, as a bar at the cell's foot
    if (s.gpus > 0 && w >= 1) {
      const bw = w - 2 * inset;
      const wa = (bw * s.alloc) / s.gpus, wu = (bw * s.unalloc) / s.gpus;
      ctx.fillStyle = COLOURS.free;
      ctx.fillRect(x0 + inset, y + ROW - 6, bw, 4);
      ctx.fillStyle = COLOURS.alloc;
      ctx.fillRect(x0 + inset, y + ROW - 6, wa, 4);
      ctx.fillStyle = pat.unalloc;
      ctx.fillRect(x0 + inset + wa, y + ROW - 6, wu, 4);
    }
    if (w >= 4) {
      ctx.strokeStyle = COLOURS.line;
      ctx.lineWidth = 1;
      ctx.strokeRect(x0 + inset + 0.5, y + 1.5, w - 2 * inset - 1, ROW - 3);
    }
    if (s.mark) outline(ctx, x0 + 1, y + 1, w - 2, ROW - 2, MARK_COLOUR[s.mark], s.mark === MARK.changed ? [4, 2] : []);
    // changes below: a tab on the cell's top, 4 pixels at least, so that
    // one moved node among 100,000 can be found
    if (s.changed) {
      ctx.fillStyle = MARK_COLOUR[s.markBelow];
      ctx.fillRect(x0 + w / 2 - Math.max(w, 4) / 2, y, Math.max(w, 4), 4);
    }
    if (o.cand.switches.has(i)) outline(ctx, x0 + 1, y + 1, w - 2, ROW - 2, COLOURS.cand, o.cand.hover ? [5, 3] : []);
    if (i === o.focus.sw) outline(ctx, x0 + 1, y + 1, w - 2, ROW - 2, "#000", [2, 2]);
    if (Math.min(x1, g.w) - Math.max(x0, 0) >= 22) {
      text(ctx, s.name + " · " + NUM.format(s.nodes) + (s.mark ? " " + MARK_GLYPH[s.mark] : ""), Math.max(x0, 0) + 4, Math.min(x1, g.w) - 4, y + ROW / 2 - 2);
    }
  }
}

// text writes s between x0 and x1 when it fits, else a shorter form.
function text(ctx, s, x0, x1, y) {
  const room = x1 - x0;
  if (room < 14) return;
  let t = s;
  while (t.length > 1 && ctx.measureText(t).width > room) t = t.slice(0, Math.max(1, Math.floor(t.length * 0.7)));
  if (ctx.measureText(t).width > room) return;
  ctx.fillStyle = COLOURS.text;
  ctx.fillText(t, x0, y);
}

function outline(ctx, x, y, w, h, colour, dash) {
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.lineWidth = 2;
  ctx.setLineDash(dash);
  ctx.strokeRect(x, y, Math.max(w, 1), h);
  ctx.restore();
}

// nodeFill paints one node's GPUs in [x, x+w) of the band: allocated at
// the foot, unallocated striped above, free on top; by account, the
// account's colour; in a comparison, neutral.
function nodeFill(ctx, m, i, x, w, g, pat, o) {
  const y = g.bandTop, h = g.bandH, gp = m.gpus[i];
  if (o.changes || gp === 0) {
    ctx.fillStyle = m.mark[i] === MARK.removed ? pat.removed : gp === 0 ? COLOURS.none : COLOURS.free;
    ctx.fillRect(x, y, w, h);
    return;
  }
  if (o.byAccount) {
    ctx.fillStyle = m.acct[i] >= 0 ? ACCOUNT_COLOURS[m.acct[i] % ACCOUNT_COLOURS.length] : COLOURS.free;
    ctx.fillRect(x, y, w, h);
    return;
  }
  const ha = (h * m.alloc[i]) / gp, hu = (h * m.unalloc[i]) / gp;
  ctx.fillStyle = COLOURS.free;
  ctx.fillRect(x, y, w, h - ha - hu);
  ctx.fillStyle = pat.unalloc;
  ctx.fillRect(x, y + h - ha - hu, w, hu);
  ctx.fillStyle = COLOURS.alloc;
  ctx.fillRect(x, y + h - ha, w, ha);
}

function drawNodes(ctx, m, g, pat, o) {
  const gap = g.px >= 6 ? 1 : 0;
  const w = g.px - gap;
  const first = Math.max(0, firstNode(m, g.a));
  for (let i = first; i < m.names.length; i++) {
    const x = g.x(m.slot[i]);
    if (x > g.w) break;
    nodeFill(ctx, m, i, x, w, g, pat, o);
    if (m.prot[i] && !o.changes) {
      ctx.fillStyle = pat.prot;
      ctx.fillRect(x, g.bandTop, w, 6);
    }
    const mk = m.mark[i];
    if (mk) {
      ctx.fillStyle = MARK_COLOUR[mk];
      ctx.fillRect(x, g.stripTop, Math.max(w, 1), STRIP);
      if (w >= 4) outline(ctx, x + 1, g.bandTop + 1, w - 2, g.bandH - 2, MARK_COLOUR[mk], []);
    }
    if (o.hlNode === i) {
      ctx.fillStyle = COLOURS.hl;
      ctx.fillRect(x, g.stripTop, Math.max(w, 1), STRIP);
      outline(ctx, x, g.bandTop, w, g.bandH, "#000", []);
    }
    if (o.cand.nodes.has(i)) {
      ctx.fillStyle = COLOURS.cand;
      ctx.fillRect(x, g.stripTop + 2, Math.max(w, 1), STRIP - 4);
      outline(ctx, x + 1, g.bandTop + 1, w - 2, g.bandH - 2, COLOURS.cand, o.cand.hover ? [4, 2] : []);
    }
    if (o.focus.node === i) outline(ctx, x + 1, g.bandTop + 1, w - 2, g.bandH - 2, "#000", [2, 2]);
    if (w >= 12) nodeLabel(ctx, m, i, x, w, g, o);
    // a sub-domain (rack) boundary inside a domain: a dashed line
    if (i > first && m.dom[i] >= 0 && m.dom[i] === m.dom[i - 1] && m.sub[i] !== m.sub[i - 1] && m.leaf[i] === m.leaf[i - 1]) {
      ctx.save();
      ctx.strokeStyle = COLOURS.dom;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(x - gap / 2, g.bandTop);
      ctx.lineTo(x - gap / 2, g.bandTop + g.bandH);
      ctx.stroke();
      ctx.restore();
    }
  }
}

// nodeLabel writes the node's state as a letter besides its colour (A
// allocated, U unallocated, F free, P protected, an account's number, or
// the change's sign), and its name when there is room.
function nodeLabel(ctx, m, i, x, w, g, o) {
  let tag;
  if (o.changes) tag = MARK_GLYPH[m.mark[i]];
  else if (o.byAccount) tag = m.acct[i] >= 0 ? String(m.acct[i] + 1) : "";
  else if (m.gpus[i] === 0) tag = "–";
  else tag = (m.alloc[i] ? "A" : m.unalloc[i] ? "U" : "F") + (m.prot[i] ? "P" : "");
  ctx.fillStyle = COLOURS.text;
  ctx.textAlign = "center";
  ctx.fillText(tag, x + w / 2, g.bandTop + 16);
  ctx.textAlign = "left";
  if (w >= 16) {
    ctx.save();
    ctx.translate(x + w / 2 + 4, g.bandTop + 28);
    ctx.rotate(Math.PI / 2);
    text(ctx, m.names[i], 0, g.bandH - 32, 0);
    ctx.restore();
  }
}

function firstNode(m, a) {
  let lo = 0, hi = m.names.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (m.slot[mid] + 1 <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// drawColumns draws the band one pixel column at a time: the GPUs of the
// nodes under the column, held and free, stacked; marks, candidates and
// the highlighted node as ticks in the strip above, one pixel at least.
function drawColumns(ctx, m, g, pat, o) {
  const W = Math.ceil(g.w);
  const gpus = new Float64Array(W), al = new Float64Array(W), un = new Float64Array(W);
  const prot = new Uint8Array(W), mark = new Uint8Array(W), cand = new Uint8Array(W), nodes = new Uint32Array(W);
  const acc = o.byAccount ? new Int32Array(W * (m.accounts.length + 1)) : null;
  const K = m.accounts.length + 1;
  const first = Math.max(0, firstNode(m, g.a));
  for (let i = first; i < m.names.length; i++) {
    const c = Math.floor(g.x(m.slot[i]));
    if (c >= W) break;
    if (c < 0) continue;
    nodes[c]++;
    gpus[c] += m.gpus[i];
    al[c] += m.alloc[i];
    un[c] += m.unalloc[i];
    if (m.prot[i]) prot[c] = 1;
    const mk = m.mark[i];
    if (mk && (!mark[c] || mk === MARK.removed)) mark[c] = mk;
    if (o.cand.nodes.has(i)) cand[c] = 1;
    if (acc) acc[c * K + m.acct[i] + 1] += m.gpus[i];
  }
  const y = g.bandTop, h = g.bandH;
  for (let c = 0; c < W; c++) {
    if (!nodes[c]) continue;
    if (o.changes || gpus[c] === 0) {
      ctx.fillStyle = mark[c] === MARK.removed ? pat.removed : gpus[c] === 0 ? COLOURS.none : COLOURS.free;
      ctx.fillRect(c, y, 1, h);
    } else if (acc) {
      let best = 0;
      for (let k = 1; k < K; k++) if (acc[c * K + k] > acc[c * K + best]) best = k;
      ctx.fillStyle = best > 0 ? ACCOUNT_COLOURS[(best - 1) % ACCOUNT_COLOURS.length] : COLOURS.free;
      ctx.fillRect(c, y, 1, h);
    } else {
      const ha = (h * al[c]) / gpus[c], hu = (h * un[c]) / gpus[c];
      ctx.fillStyle = COLOURS.free;
      ctx.fillRect(c, y, 1, h - ha - hu);
      ctx.fillStyle = pat.unalloc;
      ctx.fillRect(c, y + h - ha - hu, 1, hu);
      ctx.fillStyle = COLOURS.alloc;
      ctx.fillRect(c, y + h - ha, 1, ha);
    }
    if (prot[c] && !o.changes) {
      ctx.fillStyle = COLOURS.prot;
      ctx.fillRect(c, y, 1, 6);
    }
    if (mark[c]) {
      ctx.fillStyle = MARK_COLOUR[mark[c]];
      ctx.fillRect(c - 1, g.stripTop, 3, STRIP);
    }
    if (cand[c]) {
      ctx.fillStyle = COLOURS.cand;
      ctx.fillRect(c - 1, g.stripTop, 3, STRIP);
    }
  }
  if (o.hlNode >= 0) {
    const c = Math.floor(g.x(m.slot[o.hlNode]));
    ctx.fillStyle = COLOURS.hl;
    ctx.fillRect(c - 2, g.stripTop, 5, STRIP);
    outline(ctx, c - 2, g.bandTop, 5, g.bandH, "#000", []);
  }
}

// drawDomains outlines each NVLink domain's run of nodes inside its leaf.
function drawDomains(ctx, m, g) {
  ctx.save();
  ctx.strokeStyle = COLOURS.dom;
  ctx.lineWidth = 1.5;
  for (const r of m.runs) {
    const x0 = g.x(r.a), x1 = g.x(r.b);
    if (x1 < 0 || x0 > g.w) continue;
    ctx.strokeRect(x0 + 0.75, g.bandTop - 1, x1 - x0 - 1.5, g.bandH + 1);
    if (x1 - x0 > 40) {
      ctx.fillStyle = "rgba(255,255,255,.85)";
      const label = m.domains[r.dom].name;
      const tw = Math.min(ctx.measureText(label).width + 6, x1 - x0 - 4);
      ctx.fillRect(x0 + 2, g.bandTop + g.bandH - 14, tw, 12);
      text(ctx, label, x0 + 5, x1 - 4, g.bandTop + g.bandH - 8);
    }
  }
  ctx.restore();
}

// drawSeparators draws a line before the group of nodes under no switch.
function drawSeparators(ctx, m, g) {
  for (const s of m.sw) {
    if (!s.unplaced) continue;
    const x = g.x(s.start);
    ctx.fillStyle = COLOURS.text;
    ctx.fillRect(x - 1, 0, 2, g.h);
  }
}
