// The fabric in words and keys: what a switch or node of the drawing
// holds as text (the canvas's text alternative), the summary under it,
// its legend, and the keyboard: arrows move between switches and nodes,
// Enter zooms into a switch or opens a node, Escape zooms out, Home
// shows everything.

import { MARK, pathOf } from "./fabric-model.js";
import { COLOURS, ACCOUNT_COLOURS } from "./fabric-draw.js";
import { el, fmt } from "./api.js";

const MARK_WORD = ["", "added", "removed", "moved", "changed"];

function held(a, u, g) {
  return `${fmt(a)} allocated, ${fmt(u)} unallocated, ${fmt(g - a - u)} free of ${fmt(g)} GPUs`;
}

// describeSwitch says what switch i holds.
export function describeSwitch(f, i) {
  const m = f.m, s = m.sw[i];
  const where = pathOf(m, i).map((k) => m.sw[k].name).join(" › ");
  if (s.unplaced) return `not placed: ${fmt(s.nodes)} nodes under no switch, ${held(s.alloc, s.unalloc, s.gpus)}`;
  return `switch ${s.name}, level ${s.level}, ${fmt(s.nodes)} nodes, ${held(s.alloc, s.unalloc, s.gpus)}` +
    (s.prot ? `, ${fmt(s.prot)} nodes protected` : "") + (s.mark ? `, ${MARK_WORD[s.mark]}` : "") +
    (s.children.length ? `, ${s.children.length} switches below` : "") + `; path ${where}`;
}

// describeNode says what node i is and how it is held.
export function describeNode(f, i) {
  const m = f.m;
  const leaf = m.sw[m.leaf[i]];
  const dom = m.dom[i] >= 0 ? `domain ${m.domains[m.dom[i]].name}` + (m.sub[i] ? ` (${m.sub[i]})` : "") : "no domain";
  const acct = m.acct[i] >= 0 ? `, account ${m.accounts[m.acct[i]]}` : "";
  const mark = m.mark[i] ? `, ${MARK_WORD[m.mark[i]]}` : "";
  return `node ${m.names[i]}: ${held(m.alloc[i], m.unalloc[i], m.gpus[i])}${m.prot[i] ? ", protected" : ""}${acct}, ${dom}, ` +
    (leaf.unplaced ? "under no switch" : `leaf ${leaf.name}`) + mark;
}

// summary writes what the drawing shows as a sentence.
export function summary(f) {
  const m = f.m;
  let a = 0, u = 0, g = 0, p = 0;
  for (const s of m.sw) if (s.parent < 0) { a += s.alloc; u += s.unalloc; g += s.gpus; p += s.prot; }
  const unplaced = Number(f.canvas.dataset.unplaced);
  const shown = f.zoom >= 0 ? `Showing ${m.sw[f.zoom].name} (${fmt(m.sw[f.zoom].nodes)} nodes).` : "Showing the whole fabric.";
  const changes = f.changes ? ` Changes from snapshot ${f.changes.from} to ${f.changes.to}: ${fmt(count(m.mark, MARK.added))} nodes added, ` +
    `${fmt(count(m.mark, MARK.removed))} removed, ${fmt(count(m.mark, MARK.moved))} moved.` : "";
  document.getElementById("fabric-summary").textContent =
    `Drawn: ${fmt(m.switchCount)} switches in ${m.maxDepth + 1} rows, ${fmt(m.names.length)} nodes, ${fmt(m.domains.length)} NVLink domains` +
    (unplaced ? `, ${fmt(unplaced)} nodes under no switch in their own group` : "") +
    (f.changes ? "" : `. ${held(a, u, g)}` + (p ? `; ${fmt(p)} nodes hold protected work` : "")) + `. ${shown}${changes}`;
}

function count(marks, k) {
  let n = 0;
  for (const x of marks) if (x === k) n++;
  return n;
}

// legend shows the colours with their patterns and letters: occupancy,
// or the accounts, or the changes.
export function legend(f) {
  const box = document.getElementById("fabric-legend");
  const key = f.changes ? "changes" : f.byAccount ? "accounts:" + f.m.accounts.join(",") : "occupancy";
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const sw = (cls, style, label) => el("span", { class: "key" }, el("span", { class: "sw " + cls, style }), label);
  if (f.changes) {
    box.replaceChildren(sw("added", "", "+ added"), sw("removed", "", "× removed"), sw("moved", "", "→ moved"),
      sw("changed", "", "~ switch changed"));
  } else if (f.byAccount) {
    box.replaceChildren(...f.m.accounts.map((a, i) => sw("", `background:${ACCOUNT_COLOURS[i % ACCOUNT_COLOURS.length]}`, `${i + 1} ${a}`)),
      sw("free", "", "free"));
  } else {
    box.replaceChildren(sw("alloc", "", "A allocated"), sw("unalloc", "", "U unallocated"), sw("free", "", "F free"),
      sw("prot", "", "P protected"), sw("dom", `border-color:${COLOURS.dom}`, "NVLink domain"));
  }
}

// keyed moves the keyboard focus over the drawing.
export function keyed(f, ev) {
  const m = f.m;
  if (!m) return;
  const { sw, node } = f.focus;
  const siblings = (i) => {
    const p = m.sw[i].parent;
    return p >= 0 ? m.sw[p].children : m.sw.map((s, k) => k).filter((k) => m.sw[k].parent < 0);
  };
  const step = (d) => {
    if (node >= 0) {
      const s = m.sw[m.leaf[node]];
      const next = node + d;
      if (next >= s.first && next < s.last) f.focusOn({ node: next });
      return;
    }
    const cur = sw >= 0 ? sw : f.zoom >= 0 ? f.zoom : 0;
    const list = siblings(cur);
    const k = list.indexOf(cur) + d;
    if (k >= 0 && k < list.length) f.focusOn({ sw: list[k] });
  };
  switch (ev.key) {
  case "ArrowRight": step(1); break;
  case "ArrowLeft": step(-1); break;
  case "ArrowUp":
    if (node >= 0) f.focusOn({ sw: m.leaf[node] });
    else if (sw >= 0 && m.sw[sw].parent >= 0) f.focusOn({ sw: m.sw[sw].parent });
    break;
  case "ArrowDown": {
    const cur = sw >= 0 ? sw : f.zoom >= 0 ? f.zoom : -1;
    if (cur < 0) { f.focusOn({ sw: 0 }); break; }
    const s = m.sw[cur];
    if (s.children.length) f.focusOn({ sw: s.children[0] });
    else if (s.last > s.first) { f.zoomTo(cur, false); f.focusOn({ node: s.first }); }
    break;
  }
  case "Enter":
  case " ":
    if (node >= 0) f.open(node);
    else if (sw >= 0) f.zoomTo(sw);
    break;
  case "Escape":
  case "Backspace": f.zoomOut(); break;
  case "Home": f.focus = { sw: -1, node: -1 }; f.zoomTo(-1); break;
  default: return;
  }
  ev.preventDefault();
}
