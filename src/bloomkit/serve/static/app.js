"use strict";
// The page of `bloomkit serve`: builds its forms from GET /schema, talks JSON to the API.
let SCHEMA = null;

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fields(prefix, container) {
  for (const a of SCHEMA.attributes) {
    const label = el("label");
    label.appendChild(el("span", {}, a.name));
    const id = prefix + "-" + a.name.replace(/[^A-Za-z0-9]/g, "_");
    if (a.type === "text") {
      label.appendChild(el("input", { type: "text", id: id, "data-attr": a.name, "data-part": "text" }));
    } else {
      const step = a.type === "decimal" ? String(Math.pow(10, -a.places)) : "1";
      const common = { type: "number", step: step, min: String(a.min), max: String(a.max), "data-attr": a.name };
      label.appendChild(el("input", Object.assign({ id: id + "-lo", "data-part": "lo", placeholder: "low" }, common)));
      label.appendChild(document.createTextNode(" – "));
      label.appendChild(el("input", Object.assign({ id: id + "-hi", "data-part": "hi", placeholder: "high" }, common)));
      label.appendChild(el("small", {}, " " + a.min + " … " + a.max));
    }
    container.appendChild(label);
  }
}

function collect(container) {
  const out = {};
  for (const input of container.querySelectorAll("input[data-attr]")) {
    const name = input.dataset.attr, part = input.dataset.part, v = input.value.trim();
    if (v === "") continue;
    if (part === "text") { out[name] = v; continue; }
    const num = Number(v);
    const cur = out[name] === undefined ? [null, null] : out[name];
    cur[part === "lo" ? 0 : 1] = num;
    out[name] = cur;
  }
  for (const [k, v] of Object.entries(out)) {
    if (Array.isArray(v)) {
      if (v[0] === null) v[0] = v[1];
      out[k] = v[1] === null || v[1] === v[0] ? v[0] : v;
    }
  }
  return out;
}

function describeError(status, body) {
  if (body && Array.isArray(body.detail)) {
    return body.detail.map(d => (d.loc || []).slice(1).join(".") + ": " + d.msg).join("\n");
  }
  return "HTTP " + status + ": " + (body && body.detail ? body.detail : "error");
}

async function call(method, url, payload) {
  const resp = await fetch(url, { method: method, headers: { "Content-Type": "application/json" },
                                  body: payload === undefined ? undefined : JSON.stringify(payload) });
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  return { status: resp.status, body: body };
}

async function refreshSummary() {
  const r = await call("GET", "/stats");
  if (r.status !== 200) return;
  const s = r.body;
  const cfg = s.attributes.filter(a => a.group_size !== null).map(a => a.name + " (d=" + a.group_size + ", s=" + a.positions + ")").join(", ");
  document.getElementById("summary").textContent = s.profiles + " profiles · m = " + s.num_bits + " bits, k = " +
    s.num_hashes + " · " + cfg + " · predicted f_T = " + s.predicted_fpr.toExponential(2);
}

async function publish(ev) {
  ev.preventDefault();
  const out = document.getElementById("publish-result");
  const r = await call("POST", "/profiles", { attributes: collect(document.getElementById("publish-fields")) });
  out.replaceChildren();
  if (r.status === 201) {
    out.className = "ok";
    out.appendChild(el("p", { id: "published-id" }, "Published: id " + r.body.id));
    out.appendChild(el("p", {}, "Your token (keep it to change or delete the profile): "));
    out.appendChild(el("code", { id: "published-token" }, r.body.token));
    refreshSummary();
  } else {
    out.className = "err";
    out.textContent = describeError(r.status, r.body);
  }
}

async function search(ev) {
  ev.preventDefault();
  const out = document.getElementById("search-result");
  const payload = { query: collect(document.getElementById("search-fields")),
                    mode: document.getElementById("mode").value,
                    verify: document.getElementById("verify").checked,
                    limit: Number(document.getElementById("limit").value) };
  const r = await call("POST", "/search", payload);
  out.replaceChildren();
  if (r.status !== 200) {
    out.className = "err";
    out.textContent = describeError(r.status, r.body);
    return;
  }
  out.className = "";
  const t = el("table", { id: "search-summary" });
  const rows = [["matches", r.body.matches], ["candidates (Bloom)", r.body.candidates],
                ["predicted FPR", r.body.predicted_fpr.toExponential(3)]];
  for (const [k, v] of rows) {
    const tr = el("tr");
    tr.appendChild(el("th", {}, k));
    tr.appendChild(el("td", { id: "res-" + k.split(" ")[0] }, String(v)));
    t.appendChild(tr);
  }
  out.appendChild(t);
  out.appendChild(el("p", { id: "match-ids" }, r.body.ids.length ? "ids: " + r.body.ids.join(", ") : "no match"));
}

async function main() {
  const r = await call("GET", "/schema");
  SCHEMA = r.body;
  fields("pub", document.getElementById("publish-fields"));
  fields("q", document.getElementById("search-fields"));
  document.getElementById("publish-form").addEventListener("submit", publish);
  document.getElementById("search-form").addEventListener("submit", search);
  await refreshSummary();
  document.body.dataset.ready = "1";
}

main();
