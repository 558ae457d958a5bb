"use strict";
// The page of `bloomkit serve`: builds its forms from GET /schema, talks JSON to the API.
let SCHEMA = null;
let LAST = null;        // the last search: {payload, cursors: [after of each page shown], page}

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fields(prefix, container) {
  for (const a of SCHEMA.attributes) {
    const box = el("label", { class: "field" });
    box.appendChild(el("span", {}, a.name));
    const id = prefix + "-" + a.name.replace(/[^A-Za-z0-9]/g, "_");
    if (a.type === "text") {
      box.appendChild(el("input", { type: "text", id: id, "data-attr": a.name, "data-part": "text",
                                    autocomplete: "off" }));
    } else {
      const step = a.type === "decimal" ? String(Math.pow(10, -a.places)) : "1";
      const common = { type: "number", step: step, min: String(a.min), max: String(a.max), "data-attr": a.name,
                       inputmode: "decimal" };
      const pair = el("span", { class: "pair" });
      pair.appendChild(el("input", Object.assign({ id: id + "-lo", "data-part": "lo", placeholder: "from",
                                                   "aria-label": a.name + " from" }, common)));
      pair.appendChild(document.createTextNode("–"));
      pair.appendChild(el("input", Object.assign({ id: id + "-hi", "data-part": "hi", placeholder: "to",
                                                   "aria-label": a.name + " to" }, common)));
      box.appendChild(pair);
      box.appendChild(el("small", {}, a.min + " … " + a.max));
    }
    container.appendChild(box);
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

function plural(n, one, many) { return n.toLocaleString("en") + " " + (n === 1 ? one : many); }

function num(x) { return x === 0 ? "0" : x < 0.01 ? x.toExponential(1) : x < 10 ? x.toFixed(2) : x.toFixed(1); }

function fmtExpected(x, sd) {
  if (x === null || x === undefined) return "";
  return sd ? num(x) + " ± " + num(sd) : num(x);
}

function showValue(v) {
  if (v === undefined || v === null) return "";
  if (Array.isArray(v)) return v[0] + " – " + v[1];
  return String(v);
}

async function refreshSummary() {
  const r = await call("GET", "/stats");
  if (r.status !== 200) return;
  const s = r.body;
  document.getElementById("summary").textContent = plural(s.profiles, "profile", "profiles") + " published · each a " +
    s.num_bits + "-bit Bloom filter (k = " + s.num_hashes + ")";
}

async function publish(ev) {
  ev.preventDefault();
  const out = document.getElementById("publish-result");
  const r = await call("POST", "/profiles", { attributes: collect(document.getElementById("publish-fields")) });
  out.replaceChildren();
  if (r.status === 201) {
    out.className = "ok";
    out.appendChild(el("p", { id: "published-id" }, "Published: id " + r.body.id));
    const p = el("p", {}, "Your token (keep it to change or delete the profile): ");
    p.appendChild(el("code", { id: "published-token" }, r.body.token));
    out.appendChild(p);
    refreshSummary();
  } else {
    out.className = "err";
    out.textContent = describeError(r.status, r.body);
  }
}

function resultsTable(profiles) {
  const t = el("table", { id: "results" });
  const head = el("tr");
  head.appendChild(el("th", {}, "id"));
  for (const a of SCHEMA.attributes) head.appendChild(el("th", {}, a.name));
  t.appendChild(el("thead")).appendChild(head);
  const body = el("tbody");
  for (const p of profiles) {
    const tr = el("tr");
    tr.appendChild(el("td", { "data-label": "id" }, String(p.id)));
    for (const a of SCHEMA.attributes) {
      tr.appendChild(el("td", { "data-label": a.name }, p.attributes ? showValue(p.attributes[a.name]) : "(removed)"));
    }
    body.appendChild(tr);
  }
  t.appendChild(body);
  return t;
}

async function runSearch(after) {
  const summary = document.getElementById("result-summary");
  const hint = document.getElementById("result-hint");
  const box = document.getElementById("results-box");
  const payload = Object.assign({}, LAST.payload, { after: after });
  const r = await call("POST", "/search", payload);
  box.replaceChildren();
  hint.textContent = "";
  if (r.status !== 200) {
    summary.className = "err";
    summary.textContent = describeError(r.status, r.body);
    document.getElementById("pager").hidden = true;
    document.getElementById("search-result").className = "err";
    return;
  }
  document.getElementById("search-result").className = "";
  summary.className = "";
  const b = r.body;
  const falseFound = b.candidates - b.matches;
  const model = b.model || {};
  const expected = model.reason ? "0" : b.expected_false_candidates === 0 ? "≈ 0 (below 1e-12 each)" :
    fmtExpected(b.expected_false_candidates, model.sd);
  const add = t => summary.appendChild(document.createTextNode(t));
  const span = (id, t) => summary.appendChild(el("span", { id: id }, t));
  summary.replaceChildren();
  if (payload.verify) {
    span("res-matches", plural(b.matches, "match", "matches"));
    add(" · the filters gave ");
    span("res-candidates", plural(b.candidates, "candidate", "candidates"));
    add("; verification removed ");
    span("res-false", plural(falseFound, "false candidate", "false candidates"));
    add(" (the model expected ");
    span("res-expected", expected);
    add(").");
  } else {
    span("res-matches", plural(b.matches, "candidate", "candidates"));
    add(" (not verified: false ones included; the model expects ");
    span("res-expected", expected);
    add(" of them to be false).");
  }
  if (model.reason) {
    hint.textContent = model.reason.startsWith("every profile") ? "Every stored profile matches this query: there is no " +
      "profile a filter could let through by mistake." : "The model does not price this query: " + model.reason + ".";
  }
  if (b.matches === 0) {
    const ranged = Object.values(payload.query).some(v => Array.isArray(v));
    if (payload.mode === "subset" && ranged) {
      const other = await call("POST", "/search", Object.assign({}, payload, { mode: "intersect", limit: 1, after: 0 }));
      const n = other.status === 200 ? other.body.matches : null;
      hint.textContent = "No profile's range covers all of your range. " + (n ? plural(n, "profile overlaps", "profiles overlap") +
        " it: choose \"Overlaps my query\" to see them." : "None overlaps it either.");
    } else {
      hint.textContent = "No profile matches. Leave some fields empty, or widen a range.";
    }
  }
  const profiles = b.profiles || [];
  if (profiles.length) box.appendChild(resultsTable(profiles));
  const pager = document.getElementById("pager");
  const pages = Math.max(1, Math.ceil(b.matches / payload.limit));
  pager.hidden = pages <= 1;
  document.getElementById("page-info").textContent = "page " + (LAST.page + 1) + " of " + pages;
  document.getElementById("prev-page").disabled = LAST.page === 0;
  document.getElementById("next-page").disabled = b.next === null;
  LAST.next = b.next;
}

async function search(ev) {
  ev.preventDefault();
  LAST = { payload: { query: collect(document.getElementById("search-fields")),
                      mode: document.querySelector("input[name=mode]:checked").value,
                      verify: document.getElementById("verify").checked,
                      limit: Number(document.getElementById("limit").value), records: true },
           cursors: [0], page: 0, next: null };
  await runSearch(0);
}

async function nextPage() {
  if (LAST === null || LAST.next === null) return;
  LAST.cursors.push(LAST.next);
  LAST.page += 1;
  await runSearch(LAST.next);
}

async function prevPage() {
  if (LAST === null || LAST.page === 0) return;
  LAST.cursors.pop();
  LAST.page -= 1;
  await runSearch(LAST.cursors[LAST.cursors.length - 1]);
}

async function main() {
  const r = await call("GET", "/schema");
  SCHEMA = r.body;
  fields("q", document.getElementById("search-fields"));
  fields("pub", document.getElementById("publish-fields"));
  document.getElementById("search-form").addEventListener("submit", search);
  document.getElementById("publish-form").addEventListener("submit", publish);
  document.getElementById("next-page").addEventListener("click", nextPage);
  document.getElementById("prev-page").addEventListener("click", prevPage);
  await refreshSummary();
  document.body.dataset.ready = "1";
}

main();
