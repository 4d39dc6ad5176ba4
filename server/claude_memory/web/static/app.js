// The dashboard: one page per hash route, each drawn from the HTTP API (/api/v1/<operation>), live updates from
// /api/v1/stream. No framework and no build step. Every piece of stored text goes into the page as text
// (textContent), never as HTML. Memories are named by their citation (mem:XXXXXX): event ids are 64-bit and
// would lose digits as JavaScript numbers.

const CSRF = document.querySelector('meta[name="csrf"]').content;
const TYPES = ["user_prompt", "agent_response", "tool_use", "subagent_prompt", "compaction", "compact_summary"];
const main = document.getElementById("main");
const live = { listeners: new Set(), status: null, samples: [] };

// ------------------------------------------------------------------ helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

async function api(name, params = {}, { post = false } = {}) {
  let response;
  if (post) {
    response = await fetch(`/api/v1/${name}`, {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": CSRF },
      body: JSON.stringify(params),
    });
  } else {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === null || value === undefined || value === "") continue;
      if (Array.isArray(value)) value.forEach((v) => query.append(key, v));
      else query.append(key, typeof value === "object" ? JSON.stringify(value) : value);
    }
    response = await fetch(`/api/v1/${name}?${query}`, { credentials: "same-origin" });
  }
  const body = await response.json().catch(() => ({ error: { message: `The dashboard answered ${response.status}.` } }));
  if (!response.ok) throw new Error(body.error ? body.error.message : `The dashboard answered ${response.status}.`);
  return body;
}

function banner(message) {
  const node = document.getElementById("banner");
  node.textContent = message || "";
  node.hidden = !message;
}

const number = (n) => (n ?? 0).toLocaleString("en");
const memories = (n) => `${number(n)} ${n === 1 ? "memory" : "memories"}`;
const when = (ts) => (ts ? ts.replace("T", " ").replace(/\.\d+Z$|Z$/, "") : "–");
const bytes = (n) => (n > 1 << 30 ? `${(n / (1 << 30)).toFixed(1)} GB` : n > 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${Math.round(n / 1024)} KB`);
const shortSession = (id) => (id || "").slice(0, 8);
const sourceText = (s) => (s && s.path ? `${s.path}:${s.line_start ?? "?"}${s.line_end && s.line_end !== s.line_start ? `-${s.line_end}` : ""}` : "–");
const cite = (c) => (c ? el("a", { class: "cite", href: `#/memory/${encodeURIComponent(c)}`, text: c }) : el("span", { class: "muted", text: "–" }));

function parseHash() {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const decode = (part) => { try { return decodeURIComponent(part); } catch { return part; } };
  const parts = path.split("/").filter(Boolean).map(decode);
  return { page: parts[0] || "overview", arg: parts.slice(1).join("/"), query: new URLSearchParams(query) };
}

let routeSeq = 0;
const STALE = new Error("stale");

function fresh(where) {
  if (where.seq !== routeSeq) throw STALE; // another page was asked for while this one waited for its data
}

function page(where, title, ...children) {
  fresh(where);
  main.replaceChildren(el("h1", { text: title }), ...children);
  document.title = `${title} · claude-memory`;
}

// ------------------------------------------------------------------ live updates

function connectLive() {
  const indicator = document.getElementById("live");
  const source = new EventSource("/api/v1/stream");
  source.onopen = () => { indicator.textContent = "live"; indicator.className = "live on"; };
  source.onerror = () => { indicator.textContent = "reconnecting…"; indicator.className = "live off"; };
  source.addEventListener("events", (e) => {
    const data = JSON.parse(e.data);
    live.listeners.forEach((fn) => fn("events", data));
  });
  source.addEventListener("status", (e) => {
    live.status = JSON.parse(e.data);
    live.samples.push({ t: Date.now(), pending: live.status.pending, embedded: live.status.embedded_events });
    live.samples = live.samples.slice(-60);
    live.listeners.forEach((fn) => fn("status", live.status));
  });
  source.addEventListener("service", (e) => {
    const data = JSON.parse(e.data);
    banner(data.state === "running" ? "" : data.message);
  });
}

function onLive(fn) {
  live.listeners.clear(); // one page at a time listens
  live.listeners.add(fn);
}

function embeddingRate() {
  const s = live.samples;
  if (s.length < 2) return null;
  const first = s[0], last = s[s.length - 1];
  const seconds = (last.t - first.t) / 1000;
  const done = (last.embedded ?? 0) - (first.embedded ?? 0);
  return seconds > 0 && done > 0 ? done / seconds : null;
}

// ------------------------------------------------------------------ overview

function activityChart(activity, split = "type") {
  const days = [];
  if (activity.first_day) {
    const byDay = new Map(activity.days.map((d) => [d.day, d]));
    for (let t = Date.parse(activity.first_day); t <= Date.parse(activity.last_day); t += 86400000) {
      const day = new Date(t).toISOString().slice(0, 10);
      days.push(byDay.get(day) || { day, total: 0, by_type: {}, by_project: {} });
    }
  }
  // the parts of a day's bar, bottom up, each with its colour class
  const projects = [...activity.projects.map((p) => p.project || "(none)"), "other"];
  const parts = split === "type"
    ? TYPES.map((t) => ({ key: t, label: t, cls: `t-${t}`, of: (d) => d.by_type }))
    : projects.map((p, i) => ({ key: p, label: p, cls: p === "other" ? "p-other" : `p-${i}`, of: (d) => d.by_project }));
  const max = Math.max(1, ...days.map((d) => d.total));
  const width = 600, height = 160, gap = 1, bar = days.length ? width / days.length : width;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `Events per day by ${split}`, preserveAspectRatio: "none" });
  days.forEach((d, i) => {
    let y = height;
    for (const part of parts) {
      const n = part.of(d)[part.key] || 0;
      if (!n) continue;
      const h = (n / max) * height;
      y -= h;
      const rect = svg("rect", { x: i * bar + gap / 2, y, width: Math.max(bar - gap, 0.5), height: h, class: part.cls });
      rect.append(svg("title", {}, `${d.day}: ${n} ${part.label}`));
      chart.append(rect);
    }
  });
  const shown = parts.filter((part) => days.some((d) => part.of(d)[part.key]));
  const ends = el("div", { class: "ends muted" }, el("span", { text: days.length ? days[0].day : "" }), el("span", { text: days.length ? days[days.length - 1].day : "" }));
  const legend = el("div", { class: "legend" }, shown.map((part) => el("span", {}, el("i", { class: part.cls }), part.label)));
  const toggle = el("select", { "aria-label": "Split the bars by", id: "chart-split", onchange: (e) => {
    document.getElementById("activity-chart").replaceWith(activityChart(activity, e.target.value));
    document.getElementById("chart-split").focus();
  } }, ["type", "project"].map((v) => el("option", { value: v, selected: v === split, text: `by ${v}` })));
  return el("div", { class: "chart", id: "activity-chart", "data-days": String(days.length), "data-split": split }, toggle, chart, ends, legend);
}

function kv(id, pairs) {
  return el("div", { class: "kv", id }, pairs.flatMap(([key, value]) => [el("span", { class: "muted", text: key }), el("span", {}, value)]));
}

function pipeline(e) {
  const rate = embeddingRate();
  const eta = rate && e.pending ? `${Math.ceil(e.pending / rate)} s` : "–";
  const download = e.download && e.download.state !== "idle" ? e.download.state + (e.download.error ? `: ${e.download.error}` : "") : "–";
  return kv("pipeline", [
    ["Model", el("span", { "data-testid": "model", text: `${e.model || "none"} ${e.available ? "(ready)" : `(off: ${e.reason || "not loaded"})`}` })],
    ["Pending", el("span", { "data-testid": "pending", text: number(e.pending) })],
    ["Embedded", el("span", { "data-testid": "embedded", text: number(e.embedded_events) })],
    ["Failed", el("span", { "data-testid": "failed", text: number(e.failed) })],
    ["Rate", rate ? `${rate.toFixed(1)} events/s` : "–"],
    ["ETA", eta],
    ["Download", download]]);
}

function health(status) {
  const service = status.service;
  return kv("health", [
    ["Service", service ? `running: pid ${service.pid}, version ${service.version}, up ${Math.round(service.uptime_seconds / 60)} min, peak ${service.peak_rss_mb} MB` : "in-process"],
    ["Watcher", status.watcher ? (status.watcher.running ? `watching ${status.watcher.root}` : `not watching${status.watcher.error ? `: ${status.watcher.error}` : ""}`) : "–"],
    ["Hook spool", status.spool ? `${number(status.spool.batches_waiting)} batches waiting` : "–"],
    ["Mode", status.endless ? status.endless.mode : "–"],
    ["Warnings", (status.warnings || []).length ? status.warnings.join(" ") : "none"]]);
}

function feedItem(e) {
  return el("li", { class: "feed" }, el("span", { class: "type", text: e.type }), " ", cite(e.citation), " ",
    el("span", { class: "muted", text: when(e.timestamp) }), " ", (e.text || "").slice(0, 140));
}

async function overview(where) {
  const [stats, activity, status, recent] = await Promise.all([
    api("stats"), api("activity", { days: 30 }), api("status"), api("history", { limit: 8 }),
  ]);
  const card = (id, label, value) => el("div", { class: "card" }, el("span", { class: "n", "data-testid": id, text: value }), label);
  const feed = el("ul", { class: "plain", id: "live-feed" }, recent.map(feedItem));
  page(where, "Overview",
    el("div", { class: "cards" },
      card("stat-events", "events", number(stats.events)),
      card("stat-sessions", "sessions", number(stats.sessions)),
      card("stat-projects", "projects", number(stats.projects)),
      card("stat-week", "sessions in the last week of activity", number(activity.sessions_week)),
      card("stat-size", "store size", bytes(stats.store_bytes))),
    el("h2", { text: `Events per day (${activity.first_day || "–"} to ${activity.last_day || "–"})` }),
    activityChart(activity),
    el("div", { class: "grid2" },
      el("section", {}, el("h2", { text: "By type" }), el("table", { id: "by-type" },
        Object.entries(stats.events_by_type).map(([t, n]) => el("tr", {}, el("td", { text: t }), el("td", { class: "num", "data-type": t, text: number(n) }))))),
      el("section", {}, el("h2", { text: "Busiest projects" }), el("table", { id: "by-project" },
        activity.projects.map((p) => el("tr", {}, el("td", { text: p.project || "(none)" }), el("td", { class: "num", text: number(p.events) })))))),
    el("div", { class: "grid2" },
      el("section", {}, el("h2", { text: "Embedding pipeline" }), pipeline({ events: status.store.events, ...status.embedding })),
      el("section", {}, el("h2", { text: "Service" }), health(status))),
    el("h2", { text: "Latest events" }), feed);
  let refresh = null;
  onLive((kind, data) => {
    if (kind === "status") document.getElementById("pipeline")?.replaceWith(pipeline(data));
    if (kind !== "events") return;
    data.events.slice().reverse().forEach((e) => feed.prepend(feedItem(e)));
    while (feed.children.length > 20) feed.lastChild.remove();
    clearTimeout(refresh);
    refresh = setTimeout(async () => {
      const events = document.querySelector('[data-testid="stat-events"]');
      if (!events) return; // another page by now
      try {
        const fresh = await api("stats");
        events.textContent = number(fresh.events);
        document.querySelector('[data-testid="stat-sessions"]').textContent = number(fresh.sessions);
      } catch (err) { banner(err.message); }
    }, 1000);
  });
}

// ------------------------------------------------------------------ search

async function projectOptions(selected) {
  const projects = await api("projects", { limit: 200 });
  return [el("option", { value: "", text: "all projects" }),
    ...projects.map((p) => el("option", { value: p.project, selected: p.project === selected, text: `${p.project} (${p.events})` }))];
}

function eventHead(e, extra = []) {
  return [el("span", { class: "type", text: e.type + (e.tool_name ? ` ${e.tool_name}` : "") }), cite(e.citation), ...extra,
    el("span", { class: "muted", text: when(e.timestamp) }), el("span", { class: "muted", text: e.project || "" })];
}

async function openInPlace(li, citation) {
  const open = li.querySelector(".open");
  if (open) { open.remove(); return; }
  const box = el("div", { class: "open", text: "Loading…" });
  li.append(box);
  try {
    const found = await api("details", { refs: [citation], context: 2, via: "web" });
    box.replaceChildren(detailsView(found.details[0], { compact: true }));
  } catch (err) { box.textContent = err.message; }
}

function detailsView(d, { compact = false } = {}) {
  return el("div", { class: "details", "data-citation": d.citation },
    el("pre", { class: "text full", text: d.text }),
    kv(null, [
      ["Citation", cite(d.citation)],
      ["Source", el("span", { class: "cite", "data-testid": "source", text: sourceText(d.source) })],
      ["Session", el("a", { href: `#/session/${encodeURIComponent(d.session_id)}`, text: d.session_id })],
      ["Project", d.project || "–"],
      ["Files", (d.files || []).join(", ") || "–"],
      ["Accesses", `${number(d.citation_uses)} uses in ${number(d.sessions_used)} sessions, last ${when(d.last_used)}`],
      ["Level", `L${d.level ?? 0}`]]),
    el("h2", { text: "Around it" }),
    el("ul", { class: "plain neighbours" }, (d.neighbours || []).map((n) => el("li", { class: n.is_target ? "selected" : "" },
      `#${n.position} `, el("span", { class: "type", text: n.type }), " ", cite(n.citation), " ", n.preview))),
    compact ? null : el("p", {}, el("a", { href: `#/forget?refs=${encodeURIComponent(d.citation)}`, text: "Forget this memory…" })));
}

function hitItem(hit, rank) {
  const li = el("li", { class: "hit", tabindex: "0", "data-citation": hit.citation });
  const breakdown = hit.score_breakdown ? el("details", {}, el("summary", { text: "score breakdown" }),
    el("table", {}, Object.entries(hit.score_breakdown).filter(([, v]) => v).map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { class: "num", text: v.toFixed(3) }))))) : null;
  const head = el("div", { class: "head", onclick: () => openInPlace(li, hit.citation) },
    el("span", { class: "muted", text: `${rank}.` }), ...eventHead(hit, [
      el("span", { class: `badge conf-${hit.confidence}`, text: hit.confidence }),
      el("span", { class: "muted", text: `score ${hit.score.toFixed(3)}` }),
      hit.duplicates.length ? el("span", { class: "badge", text: `×${hit.duplicates.length + 1}` }) : null]));
  li.addEventListener("keydown", (e) => { if (e.key === "Enter" && e.target === li) openInPlace(li, hit.citation); });
  li.append(head, el("div", { class: "snippet", text: hit.text }), breakdown || "");
  return li;
}

async function search(where) {
  const { query } = where;
  const q = query.get("q") || "";
  const form = el("form", { class: "filters", role: "search" },
    el("label", {}, "Query", el("input", { type: "search", name: "q", value: q, id: "q", autofocus: true, required: true })),
    el("label", {}, "Mode", el("select", { name: "mode" }, ["hybrid", "keyword", "semantic"].map((m) => el("option", { value: m, selected: query.get("mode") === m, text: m })))),
    el("label", {}, "Project", el("select", { name: "project" }, await projectOptions(query.get("project")))),
    el("label", {}, "Type", el("select", { name: "types" }, el("option", { value: "", text: "any" }), TYPES.map((t) => el("option", { value: t, selected: query.get("types") === t, text: t })))),
    el("label", {}, "Since", el("input", { type: "date", name: "since", value: query.get("since") || "" })),
    el("label", {}, "Until", el("input", { type: "date", name: "until", value: query.get("until") || "" })),
    el("label", {}, "Session", el("input", { name: "session", value: query.get("session") || "", size: 10 })),
    el("button", { class: "primary", type: "submit", text: "Search" }),
    el("button", { type: "button", id: "preview-button", text: "Injection preview", onclick: () => preview(form) }));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new URLSearchParams([...new FormData(form)].filter(([, v]) => v));
    if (location.hash === `#/search?${data}`) route(); // the same search again: run it again
    else location.hash = `#/search?${data}`;
  });
  const results = el("ol", { class: "hits", id: "results" });
  const previewBox = el("div", { id: "preview" });
  page(where, "Search", form, previewBox, results);
  if (!q) { results.append(el("p", { class: "muted", text: "Words, a question, a file name or a citation." })); return; }
  const params = { query: q, limit: 20, mode: query.get("mode") || "hybrid", project: query.get("project"), session: query.get("session"),
    types: query.get("types") ? [query.get("types")] : [], since: query.get("since") ? `${query.get("since")}T00:00:00Z` : null,
    until: query.get("until") ? `${query.get("until")}T23:59:59Z` : null };
  const found = await api("search", params);
  const meta = found.meta;
  results.before(el("p", { class: "muted", id: "search-meta", text: `${found.results.length} results · ${meta.mode} search${meta.requested_mode !== meta.mode ? ` (asked ${meta.requested_mode})` : ""} · confidence ${meta.confidence}` }));
  if (!found.results.length) results.append(el("p", { text: "Nothing matches." }));
  found.results.forEach((hit, i) => results.append(hitItem(hit, i + 1)));
}

async function preview(form) {
  const data = new FormData(form);
  const box = document.getElementById("preview");
  if (!data.get("q")) return;
  const payload = { hook_event_name: "UserPromptSubmit", session_id: "web-preview", prompt: data.get("q") };
  if (data.get("project")) payload.cwd = data.get("project");
  box.replaceChildren(el("p", { class: "muted", text: "Asking what a prompt like this would get…" }));
  try {
    const answer = await api("context", { payload, preview: true }, { post: true });
    box.replaceChildren(el("div", { class: "preview" },
      el("strong", { text: `A prompt like this would get ${number(answer.additional_context.length)} characters, ${answer.citations.length} memories` }),
      answer.reason ? el("p", { class: "muted", text: answer.reason }) : null,
      el("pre", { class: "text", text: answer.additional_context || "(nothing)" })));
  } catch (err) { box.replaceChildren(el("p", { text: err.message })); }
}

// ------------------------------------------------------------------ sessions and timeline

const SESSIONS_PAGE = 100;

function sessionRow(s) {
  return el("tr", {},
    el("td", { text: when(s.last_ts) }),
    el("td", {}, el("a", { href: `#/session/${encodeURIComponent(s.session_id)}`, text: s.title || shortSession(s.session_id) })),
    el("td", { text: s.project || "" }), el("td", { text: s.git_branch || "" }),
    el("td", { class: "num", text: number(s.events) }), el("td", { class: "num", text: number(s.prompts) }), el("td", { class: "num", text: number(s.subagents) }));
}

async function sessions(where) {
  const { query } = where;
  const project = query.get("project") || "";
  const list = await api("sessions", { limit: SESSIONS_PAGE, project });
  const select = el("select", { name: "project", onchange: (e) => { location.hash = `#/sessions?project=${encodeURIComponent(e.target.value)}`; } }, await projectOptions(project));
  const table = el("table", { id: "sessions" }, el("tr", {}, ["Last activity", "Session", "Project", "Branch", "Events", "Prompts", "Subagents"].map((h) => el("th", { text: h }))),
    list.map(sessionRow));
  let last = list[list.length - 1];
  const older = el("button", { type: "button", id: "older-sessions", text: "Older sessions", hidden: list.length < SESSIONS_PAGE || !last?.last_ts });
  older.addEventListener("click", async () => {
    older.disabled = true;
    try {
      const next = await api("sessions", { limit: SESSIONS_PAGE, project, before: last.last_ts });
      next.forEach((s) => table.append(sessionRow(s)));
      last = next[next.length - 1] || last;
      older.hidden = next.length < SESSIONS_PAGE || !last.last_ts;
    } catch (err) { banner(err.message); }
    older.disabled = false;
  });
  page(where, "Sessions", el("form", { class: "filters" }, el("label", {}, "Project", select)), table, el("p", {}, older));
}

const WHO = { user_prompt: "You", agent_response: "Claude", subagent_prompt: "Task for a subagent", compaction: "Context compacted", compact_summary: "Summary after compaction" };

function timelineItem(e, fresh = false) {
  const meta = el("div", { class: "meta" }, el("span", { class: "type", text: WHO[e.type] || e.type }), cite(e.citation),
    el("span", { text: when(e.timestamp) }), el("span", { class: "cite", title: sourceText(e.source), text: sourceText(e.source).split("/").pop() }));
  const cls = `item ${e.type}${fresh ? " fresh" : ""}`;
  if (e.type === "tool_use") {
    const label = `${e.tool_name || "tool"}${e.files && e.files.length ? ` · ${e.files.join(", ")}` : ""}`;
    return el("details", { class: cls, "data-citation": e.citation }, el("summary", { text: label }), meta,
      el("pre", { class: "text", text: e.text + (e.truncated ? " …" : "") }));
  }
  const text = el("div", { class: "text", text: e.text });
  const more = e.truncated ? el("button", { type: "button", class: "more", text: "show all", onclick: async () => {
    try {
      const found = await api("details", { refs: [e.citation], context: 0, via: "web" });
      text.textContent = found.details[0].text;
      more.remove();
    } catch (err) { banner(err.message); }
  } }) : null;
  return el("div", { class: cls, "data-citation": e.citation }, meta, text, more);
}

function appendTimeline(container, e, fresh = false) {
  let parent = container;
  if (e.agent_id) {
    const last = container.lastElementChild;
    if (last && last.classList.contains("subagent") && last.dataset.agent === e.agent_id) parent = last;
    else {
      parent = el("div", { class: "subagent", "data-agent": e.agent_id }, el("div", { class: "label", text: `Subagent ${e.agent_id}` }));
      container.append(parent);
    }
  }
  parent.append(timelineItem(e, fresh));
}

async function session(where) {
  const { arg } = where;
  const events = (await api("history", { session: arg, limit: 10000 })).reverse();
  const container = el("div", { class: "convo", id: "timeline" });
  events.forEach((e) => appendTimeline(container, e));
  const follow = el("input", { type: "checkbox", id: "follow", checked: true });
  const first = events[0];
  page(where, `Session ${shortSession(arg)}`,
    el("p", { class: "muted" }, el("span", { id: "event-count", text: `${events.length} events` }),
      first ? ` · ${first.project || ""} · ${when(first.timestamp)}` : "", " · ",
      el("label", {}, follow, " follow new events")),
    container);
  onLive((kind, data) => {
    if (kind !== "events") return;
    for (const e of data.events.filter((x) => x.session_id === arg)) {
      if (e.citation && container.querySelector(`[data-citation="${CSS.escape(e.citation)}"]`)) continue; // shown already
      appendTimeline(container, e, true);
      const count = container.querySelectorAll(".item").length;
      document.getElementById("event-count").textContent = `${count} events`;
      if (follow.checked) container.lastElementChild.scrollIntoView({ block: "end" });
    }
  });
}

// ------------------------------------------------------------------ memory details

async function memory(where) {
  const { arg } = where;
  const found = await api("details", { refs: [arg], context: 3, via: "web" });
  if (!found.details.length) { page(where, "Memory", el("p", { text: `No memory ${arg}.` })); return; }
  const d = found.details[0];
  page(where, `Memory ${d.citation}`, el("p", {}, ...eventHead(d)), detailsView(d));
}

// ------------------------------------------------------------------ knowledge: tasks, insights, files

async function tasks(where) {
  const list = await api("tasks", { limit: 500 });
  const columns = new Map();
  list.forEach((t) => { if (!columns.has(t.status)) columns.set(t.status, []); columns.get(t.status).push(t); });
  page(where, "Tasks", list.length ? el("div", { class: "board", id: "board" }, [...columns].map(([status, items]) => el("section", { class: "column" },
    el("h2", { text: `${status} (${items.length})` }),
    el("ul", { class: "plain" }, items.map((t) => el("li", {}, t.title, " ", cite(t.citation), el("div", { class: "muted", text: t.project || "" }))))))) :
    el("p", { class: "muted", text: "No tasks yet: they come from Claude Code's task tools." }));
}

async function insights(where) {
  const found = await api("insights", {});
  const mark = async (id, action) => {
    try { await api("insight_mark", { id, mark: action }, { post: true }); route(); } catch (err) { banner(err.message); }
  };
  const row = (i) => el("li", { class: "hit" }, el("div", { class: "head" },
      el("span", { class: "badge", text: i.kind }), el("strong", { text: i.text }), el("span", { class: "muted", text: `${i.count} × · ${i.project || "all projects"}` }),
      i.kind === "preference" ? el("button", { type: "button", onclick: () => mark(i.id, "pin"), text: "pin" }) : null,
      i.kind === "preference" ? el("button", { type: "button", onclick: () => mark(i.id, "forget"), text: "forget" }) : null),
    el("ul", { class: "snippet" }, (i.evidence || []).map((ev) => el("li", {}, cite(ev.citation), " ", ev.text))));
  page(where, "Insights",
    el("h2", { text: "Preferences and rules" }),
    el("ol", { class: "hits", id: "preferences" }, found.preferences.length ? found.preferences.map(row) : el("p", { class: "muted", text: "None stated yet." })),
    el("h2", { text: "Repeated topics" }),
    el("ol", { class: "hits", id: "topics" }, found.topics.map(row)));
}

async function files(where) {
  const { query } = where;
  const path = query.get("path") || "";
  const form = el("form", { class: "filters" }, el("label", {}, "File", el("input", { name: "path", value: path, size: 60, required: true })),
    el("button", { class: "primary", type: "submit", text: "Show" }));
  form.addEventListener("submit", (e) => { e.preventDefault(); location.hash = `#/files?path=${encodeURIComponent(new FormData(form).get("path"))}`; });
  page(where, "Files", form);
  if (!path) { main.append(el("p", { class: "muted", text: "Which conversations touched a file: give its path." })); return; }
  const [found, blame] = await Promise.all([
    api("file_history", { path, limit: 200 }),
    api("blame", { path }).catch((err) => ({ error: err.message })),
  ]);
  const events = found.events || [];
  fresh(where);
  main.append(el("h2", { text: "Who wrote it" }), provenance(blame),
    el("h2", { text: "Conversations that touched it" }),
    el("p", { class: "muted", text: `${events.length} events touched ${path}` }),
    el("div", { class: "convo" }, events.map((e) => timelineItem(e))));
}

function provenance(blame) {
  if (blame.error) return el("p", { class: "muted", text: blame.error });
  const edits = new Map(blame.edits.map((e) => [String(e.id), e]));
  const rows = blame.ranges.filter((r) => r.edit !== null).map((r) => {
    const edit = edits.get(String(r.edit));
    return el("tr", {},
      el("td", { class: "num", text: r.start === r.end ? `${r.start}` : `${r.start}-${r.end}` }),
      el("td", {}, edit ? cite(edit.citation) : "–", edit ? ` ${edit.tool} · ${when(edit.timestamp)}` : ""),
      el("td", { text: edit && edit.prompt ? edit.prompt.text : "" }),
      el("td", { class: "muted", text: `${r.method || ""} ${r.confidence < 1 ? r.confidence.toFixed(2) : ""}` }));
  });
  return el("div", { id: "provenance" },
    el("p", { class: "muted", text: `${number(blame.claude_lines)} of ${number(blame.lines)} lines written in ${number(blame.sessions)} sessions (${number(blame.edit_records)} editing calls remembered)` }),
    rows.length ? el("table", {}, el("tr", {}, ["Lines", "Written by", "Asked for", "Match"].map((h) => el("th", { text: h }))), rows) : null);
}

// ------------------------------------------------------------------ forget

async function forget(where) {
  const { query } = where;
  const kinds = { refs: "Memories (citations)", session: "A session", project: "A project", before: "Everything before a date" };
  const kind = el("select", { name: "kind" }, Object.entries(kinds).map(([k, label]) => el("option", { value: k, text: label, selected: query.has(k) })));
  const start = [...Object.keys(kinds)].map((k) => query.get(k)).find(Boolean) || "";
  const value = el("input", { name: "value", value: start, size: 50, required: true, "aria-label": "What to forget" });
  const out = el("div", { id: "forget-result" });
  const selector = () => {
    const v = value.value.trim();
    if (kind.value === "refs") return { refs: v.split(/[\s,]+/).filter(Boolean) };
    if (kind.value === "before") return { before: v.length === 10 ? `${v}T00:00:00Z` : v };
    return { [kind.value]: v };
  };
  const form = el("form", { class: "filters" }, el("label", {}, "Forget", kind), el("label", {}, "Which", value),
    el("button", { class: "primary", type: "submit", text: "Preview" }));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const chosen = selector();
    try {
      const dry = await api("forget", { ...chosen, dry_run: true }, { post: true });
      if (!dry.matching) { out.replaceChildren(el("p", { text: "Nothing matches: nothing would be forgotten." })); return; }
      const confirm = el("button", { class: "danger", type: "button", id: "confirm-forget", text: `Forget ${memories(dry.matching)} for good` });
      confirm.addEventListener("click", async () => {
        confirm.disabled = true;
        try {
          const done = await api("forget", chosen, { post: true });
          const more = done.forgotten > dry.matching ? ` (${number(done.forgotten - dry.matching)} of them captured after the preview)` : "";
          out.replaceChildren(el("p", { id: "forgotten", text: `Forgotten: ${memories(done.forgotten)}${more}.` }));
        } catch (err) { out.replaceChildren(el("p", { text: err.message })); }
      });
      out.replaceChildren(el("p", { id: "forget-preview", text: `${memories(dry.matching)} would be forgotten. This cannot be undone.` }), confirm,
        " ", el("button", { type: "button", text: "Cancel", onclick: () => out.replaceChildren() }));
      confirm.focus();
    } catch (err) { out.replaceChildren(el("p", { text: err.message })); }
  });
  page(where, "Forget", el("p", { class: "muted", text: "Removes memories from the events, the keyword index and the vectors. You see how many first." }), form, out);
}

// ------------------------------------------------------------------ routing and keys

const PAGES = { overview, search, sessions, session, memory, tasks, insights, files, forget };
const NAV = { session: "sessions", memory: "search" };

async function route() {
  const where = { ...parseHash(), seq: ++routeSeq };
  const render = PAGES[where.page] || overview;
  document.querySelectorAll("nav a").forEach((a) => a.toggleAttribute("aria-current", a.dataset.page === (NAV[where.page] || where.page)));
  document.querySelectorAll("nav a[aria-current]").forEach((a) => a.setAttribute("aria-current", "page"));
  onLive(() => {});
  try {
    await render(where);
    if (where.seq === routeSeq) banner("");
  } catch (err) {
    if (err !== STALE && where.seq === routeSeq) banner(err.message);
  }
}

let pendingG = false;
document.addEventListener("keydown", (e) => {
  if (e.target.closest("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "/") { e.preventDefault(); location.hash = "#/search"; setTimeout(() => document.getElementById("q")?.focus(), 50); return; }
  if (pendingG) {
    pendingG = false;
    const link = document.querySelector(`nav a[accesskey="${CSS.escape(e.key)}"]`);
    if (link) { location.hash = link.getAttribute("href"); return; }
  }
  if (e.key === "g") { pendingG = true; return; }
  if (e.key === "j" || e.key === "k") {
    const items = [...main.querySelectorAll(".hit, #sessions tr, .item")];
    const at = items.indexOf(document.activeElement.closest(".hit, tr, .item"));
    const next = items[Math.min(Math.max(at + (e.key === "j" ? 1 : -1), 0), items.length - 1)];
    if (next) { if (!next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1"); next.focus(); }
  }
});

window.addEventListener("hashchange", () => {
  if (location.hash === "#main") { main.focus(); return; } // the skip link, not a page
  route();
});
connectLive();
route();
