// What every part of the web view shares: the API client with its token,
// and small helpers to make elements and numbers. Every text from the API
// is set as text, never as markup.

export const state = { token: sessionStorage.getItem("toposcope-token") || "" };

export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

const numbers = new Intl.NumberFormat("en-US");
export const fmt = (n) => numbers.format(Number(n));
export const when = (t) => new Date(t).toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" });

// api fetches a path of the API. On 401 it asks for a token once and
// retries; a request that needs the write scope (opts.write) also asks
// on 403, saying so.
export async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (state.token) headers.Authorization = "Bearer " + state.token;
  if (opts.body) headers["Content-Type"] = "application/json";
  const r = await fetch(path, Object.assign({}, opts, { headers }));
  if ((r.status === 401 || (r.status === 403 && opts.write)) && !opts.retried) {
    const why = opts.write ? "This needs a token with the write scope. It is kept in this tab only." : "";
    if (await askToken(why)) return api(path, Object.assign({}, opts, { retried: true }));
  }
  const body = r.headers.get("Content-Type")?.includes("json") ? await r.json() : await r.text();
  if (!r.ok) {
    const msg = body && body.error ? body.error.message || body.error : r.status + " " + r.statusText;
    throw new Error(path.split("?")[0] + ": " + (typeof msg === "string" ? msg : JSON.stringify(msg)));
  }
  return body;
}

// askToken opens the token dialog with why (or its default text) and
// keeps the token given for the browser tab.
export function askToken(why) {
  const d = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  const text = document.getElementById("token-why");
  text.textContent = why || "This service needs a token. It is kept in this tab only.";
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

export function showError(e) {
  const b = document.getElementById("error");
  b.textContent = e ? String(e.message || e) : "";
  b.hidden = !e;
}
