// crowdsift web page: ask a question, follow the job's progress, show the sourced answers.
//
// Everything the server sends is data fetched from strangers (Reddit posts, channel archives),
// so it reaches the DOM through textContent / createElement only — never innerHTML — and only
// http(s) URLs become links. The event stream is read with fetch() rather than EventSource
// because EventSource cannot send the Authorization header an API-key server needs.

const KEY_STORAGE = "crowdsift.apiKey";
const POLL_MS = 1500;
const STREAM_ATTEMPTS = 3;
const CITATION = /\[(post|comment):([^\]\s]+)\]|\[(\d{1,3})\]/g;

const $ = (id) => document.getElementById(id);
const state = { experts: new Map(), running: false, retry: null, lastSeq: 0 };

// ---- DOM building (no HTML parsing of data anywhere) ------------------------------------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "className") node.className = value;
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

function append(node, child) {
  if (child === undefined || child === null || child === false) return;
  if (Array.isArray(child)) child.forEach((c) => append(node, c));
  else node.append(typeof child === "string" ? document.createTextNode(child) : child);
}

function show(node, visible) {
  node.hidden = !visible;
}

/** The URL if it is an absolute http(s) URL, else null (javascript:, data:, relative …). */
function safeUrl(raw) {
  if (typeof raw !== "string") return null;
  try {
    const url = new URL(raw.trim());
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A link that opens the source in a new tab, or plain text when the URL is not http(s). */
function sourceLink(raw, label, description) {
  const href = safeUrl(raw);
  const text = label ?? String(raw ?? "");
  if (href === null) {
    const shown = label && raw ? `${label} (${raw})` : text;
    return el("span", { className: "not-a-link", title: "not a web address; shown as text" },
      shown);
  }
  return el("a", { href, target: "_blank", rel: "noopener noreferrer", "aria-label": description },
    text);
}

/** Text with its citation markers ([post:12], [3]) turned into links where resolvable. */
function cited(text, resolve) {
  const value = String(text ?? "");
  const nodes = [];
  let last = 0;
  for (const match of value.matchAll(CITATION)) {
    if (match.index > last) nodes.push(value.slice(last, match.index));
    const target = resolve ? resolve(match) : null;
    nodes.push(target
      ? el("sup", { className: "cite" },
        sourceLink(target.url, `[${target.n}]`, `source ${target.n}`))
      : match[0]);
    last = match.index + match[0].length;
  }
  nodes.push(value.slice(last));
  return nodes;
}

/** Paragraphs and "- " bullet lists, as the engines write them. */
function prose(text, resolve) {
  const box = el("div", { className: "prose" });
  let list = null;
  for (const line of String(text ?? "").split(/\r?\n/)) {
    const bullet = /^\s*[-*•]\s+(.*)$/.exec(line);
    if (bullet) {
      if (list === null) box.append((list = el("ul")));
      list.append(el("li", {}, cited(bullet[1], resolve)));
    } else {
      list = null;
      if (line.trim()) box.append(el("p", {}, cited(line, resolve)));
    }
  }
  return box;
}

function badge(text, kind) {
  return el("span", { className: `badge ${kind ? `badge-${kind}` : ""}`.trim() }, text);
}

function statusBadge(status) {
  const value = String(status ?? "unknown");
  const kind = ["ok", "partial", "error", "failed", "no_results"].includes(value) ? value : "";
  return badge(value.replace("_", " "), kind);
}

function engineLabel(engine) {
  if (engine === "local") return "local — extractive, not an LLM";
  if (engine === "openai") return "openai (LLM)";
  return String(engine || "unknown");
}

function section(title, ...children) {
  return el("section", { className: "block" }, el("h3", { text: title }), children);
}

function bulletList(items, render = (x) => cited(x)) {
  return el("ul", {}, (items || []).map((item) => el("li", {}, render(item))));
}

// ---- API calls ----------------------------------------------------------------------------

class ApiError extends Error {}
class KeyNeeded extends ApiError {}

function storedKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

function authHeaders(extra = {}) {
  const key = storedKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

function errorMessage(body, fallback) {
  const message = body && body.error && body.error.message;
  return typeof message === "string" && message ? message : fallback;
}

async function api(path, init = {}) {
  const headers = authHeaders(init.body ? { "Content-Type": "application/json" } : {});
  let response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch {
    throw new ApiError("cannot reach the crowdsift server; check that it is still running");
  }
  const body = await response.json().catch(() => null);
  if (response.status === 401) throw new KeyNeeded(errorMessage(body, "an API key is needed"));
  if (!response.ok) {
    throw new ApiError(errorMessage(body, `the server answered HTTP ${response.status}`));
  }
  return body;
}

// ---- API key ------------------------------------------------------------------------------

function askForKey(retry) {
  const refused = storedKey() !== null;
  try {
    sessionStorage.removeItem(KEY_STORAGE);
  } catch { /* storage unavailable: the key just is not remembered */ }
  state.retry = retry;
  $("auth-message").textContent = refused
    ? "The server refused that API key. Enter the key set in CROWDSIFT_API_KEY."
    : "This server asks for an API key (CROWDSIFT_API_KEY). It is kept for this tab only.";
  show($("auth"), true);
  $("api-key").focus();
}

function onKeySubmit(event) {
  event.preventDefault();
  const key = $("api-key").value.trim();
  if (!key) return;
  try {
    sessionStorage.setItem(KEY_STORAGE, key);
  } catch {
    $("auth-message").textContent = "This browser blocks session storage; the key cannot be kept.";
    return;
  }
  $("api-key").value = "";
  show($("auth"), false);
  const retry = state.retry;
  state.retry = null;
  if (retry) retry();
}

// ---- Experts picker -------------------------------------------------------------------------

async function loadExperts() {
  const status = $("experts-status");
  status.textContent = "Loading experts…";
  let experts;
  try {
    experts = await api("/api/experts");
  } catch (err) {
    if (err instanceof KeyNeeded) {
      status.textContent = "Enter the API key above to see the experts.";
      askForKey(loadExperts);
    } else {
      status.textContent = `Could not load the experts: ${err.message}`;
    }
    return;
  }
  renderExpertPicker(Array.isArray(experts) ? experts : []);
}

function renderExpertPicker(experts) {
  state.experts = new Map(experts.map((e) => [String(e.expert_id), e]));
  const list = $("expert-list");
  list.replaceChildren();
  experts.forEach((expert, index) => {
    const input = el("input", { type: "checkbox", id: `expert-${index}`, name: "expert" });
    input.value = String(expert.expert_id);
    const details = [expert.language, `${Number(expert.posts) || 0} posts`].filter(Boolean);
    list.append(el("li", {}, el("label", { className: "check", for: input.id }, input,
      el("span", {}, String(expert.name || expert.expert_id), " ",
        el("span", { className: "hint" }, `(${details.join(" · ")})`)))));
  });
  $("experts-status").textContent = experts.length
    ? "Pick any number of experts, or none to search Reddit only."
    : "No experts imported yet: Reddit only.";
}

function expertName(id) {
  const expert = state.experts.get(id);
  return String((expert && expert.name) || id);
}

// ---- Asking and following a job -------------------------------------------------------------

function readForm() {
  return {
    question: $("question").value.trim(),
    experts: [...document.querySelectorAll("#expert-list input:checked")].map((i) => i.value),
    search_reddit: $("search-reddit").checked,
    use_recent_only: $("recent-only").checked,
    engine: null,
  };
}

function problemWith(request) {
  if (request.question.length < 3) return "Write a question (at least 3 characters).";
  if (!request.search_reddit && request.experts.length === 0) {
    return "Pick at least one expert, or tick “Search Reddit”.";
  }
  return null;
}

function formError(message) {
  $("form-error").textContent = message || "";
  show($("form-error"), Boolean(message));
}

function setRunning(running) {
  state.running = running;
  const button = $("submit");
  button.disabled = running;
  button.textContent = running ? "Working…" : "Ask";
  $("ask-form").setAttribute("aria-busy", String(running));
}

async function onAsk(event) {
  event.preventDefault();
  if (state.running) return;
  formError(null);
  const request = readForm();
  const problem = problemWith(request);
  if (problem) {
    formError(problem);
    return;
  }
  setRunning(true);
  try {
    const accepted = await api("/api/research", { method: "POST", body: JSON.stringify(request) });
    startView(request);
    renderJob(await follow(String(accepted.id)));
  } catch (err) {
    if (err instanceof KeyNeeded) askForKey(() => $("ask-form").requestSubmit());
    else formError(err.message);
  } finally {
    setRunning(false);
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function jobPath(id) {
  return `/api/research/${encodeURIComponent(id)}`;
}

/** Stream the job's events until ``done``; if the stream keeps breaking, poll instead. */
async function follow(id) {
  state.lastSeq = 0;
  for (let attempt = 0; attempt < STREAM_ATTEMPTS; attempt += 1) {
    if (attempt) await sleep(500 * attempt);
    try {
      if (await streamEvents(`${jobPath(id)}/events`)) return await api(jobPath(id));
    } catch (err) {
      if (err instanceof KeyNeeded) throw err;
    }
  }
  addProgress({ phase: "page", message: "live progress unavailable; checking the job instead" });
  for (;;) {
    const job = await api(jobPath(id));
    jobStatus(job.status);
    if (job.status === "done" || job.status === "failed") return job;
    await sleep(POLL_MS);
  }
}

/** Read Server-Sent Events from a fetch() body; true once the ``done`` event arrived. */
async function streamEvents(path) {
  const headers = authHeaders({ Accept: "text/event-stream" });
  if (state.lastSeq) headers["Last-Event-ID"] = String(state.lastSeq);
  const response = await fetch(path, { headers, cache: "no-store" });
  if (response.status === 401) throw new KeyNeeded("an API key is needed");
  if (!response.ok || !response.body) throw new ApiError(`event stream: HTTP ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = sseParser(onServerEvent);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return parser.finished();
    if (parser.push(value)) {
      await reader.cancel();
      return true;
    }
  }
}

/** An incremental parser of the SSE wire format; ``push`` is true once ``done`` was seen. */
function sseParser(dispatch) {
  let buffer = "";
  let event = { type: "message", data: [], id: null };
  let finished = false;
  const line = (text) => {
    if (text === "") {
      if (event.data.length) finished = dispatch(event.type, event.data.join("\n"), event.id)
        || finished;
      event = { type: "message", data: [], id: null };
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event.type = value;
    else if (field === "data") event.data.push(value);
    else if (field === "id") event.id = value;
  };
  return {
    push(chunk) {
      buffer += chunk;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      lines.forEach(line);
      return finished;
    },
    finished: () => finished,
  };
}

function onServerEvent(type, data, id) {
  let payload;
  try {
    payload = JSON.parse(data);
  } catch {
    return false;
  }
  if (type === "progress") {
    const seq = Number(payload.seq ?? id);
    if (seq && seq <= state.lastSeq) return false;
    if (seq) state.lastSeq = seq;
    addProgress(payload);
  } else if (type === "status") {
    jobStatus(payload.status);
  } else if (type === "done") {
    jobStatus(payload.status);
    return true;
  }
  return false;
}

function addProgress(event) {
  const at = typeof event.at === "string" ? new Date(event.at) : null;
  const time = at && !Number.isNaN(at.getTime()) ? at.toLocaleTimeString() : "";
  $("progress-list").append(el("li", { className: "progress-item" },
    el("span", { className: "phase" }, String(event.phase ?? "")), " ",
    el("span", { className: "message" }, String(event.message ?? "")),
    time ? el("time", { className: "hint", datetime: event.at }, ` ${time}`) : null));
}

function jobStatus(status) {
  const labels = { queued: "Queued: waiting for a worker…", running: "Researching…",
    done: "Done.", failed: "The job failed." };
  $("job-status").textContent = labels[status] || `Status: ${String(status ?? "unknown")}`;
}

// ---- Rendering the result -------------------------------------------------------------------

/** Clear the last answer and lay out placeholders for what this request will bring. */
function startView(request) {
  $("progress-list").replaceChildren();
  jobStatus("queued");
  show($("progress"), true);
  $("result-meta").replaceChildren();
  show($("result-error"), false);
  const cards = $("expert-cards");
  cards.replaceChildren(...request.experts.map((id) => expertCard(id, null, false)));
  show($("expert-answers"), request.experts.length > 0);
  $("community-body").replaceChildren(
    el("p", { className: "placeholder" }, "Waiting for the Reddit search…"));
  show($("community"), request.search_reddit);
  show($("results"), true);
}

function renderJob(job) {
  const request = job.request || { experts: [], search_reddit: false };
  const result = job.result;
  jobStatus(job.status);
  const error = job.status === "failed" ? job.error || "the job failed without a message" : null;
  $("result-error").textContent = error ? `Error: ${error}` : "";
  show($("result-error"), Boolean(error));
  $("result-meta").replaceChildren(...(result ? resultMeta(result) : []));

  // Reddit-only mode (no expert asked) shows no expert section at all, not empty cards.
  const responses = (result && result.expert_responses) || [];
  const ids = request.experts.length ? [...request.experts] : [];
  if (ids.length) responses.forEach((r) => ids.includes(r.expert_id) || ids.push(r.expert_id));
  $("expert-cards").replaceChildren(...ids.map((id) =>
    expertCard(id, responses.find((r) => r.expert_id === id) || null, true)));
  show($("expert-answers"), ids.length > 0);

  show($("community"), Boolean(request.search_reddit));
  if (request.search_reddit) {
    $("community-body").replaceChildren(...communityInsights(result));
  }
  show($("results"), true);
  $("results-title").focus();
}

function resultMeta(result) {
  return [
    el("p", { className: "question-echo" }, "Question: ", el("q", {}, String(result.question))),
    el("p", {}, "Status: ", statusBadge(result.status), " · Engine: ",
      el("span", { className: "engine" }, engineLabel(result.engine))),
  ];
}

function expertCard(id, response, finished) {
  const card = el("article", { className: "card expert-card", "data-expert": id },
    el("h3", {}, expertName(id)));
  if (response === null) {
    card.append(el("p", { className: "placeholder" }, finished
      ? "No answer came back from this expert."
      : "Waiting for this expert's answer…"));
    return card;
  }
  const sources = response.main_sources || [];
  const byPost = new Map(sources.map((s, i) => [String(s.post_id), i + 1]));
  const resolve = (m) => {
    const n = m[1] === "post" ? byPost.get(m[2]) : undefined;
    return n ? { n, url: sources[n - 1].url } : null;
  };
  card.append(
    el("p", { className: "card-meta" }, statusBadge(response.status), " ",
      badge(String(response.language || "")), " ", badge(engineLabel(response.engine))),
    prose(response.answer, resolve));
  if ((response.notes || []).length) card.append(section("Notes", bulletList(response.notes)));
  if (sources.length) card.append(section("Sources", expertSources(sources)));
  for (const part of response.comment_sections || []) {
    card.append(el("details", { className: "comments" },
      el("summary", {}, String(part.title || part.kind)), prose(part.text)));
  }
  if ((response.removed_citations || []).length) {
    card.append(el("p", { className: "hint" },
      `Citations removed (not in the evidence): ${response.removed_citations.join(", ")}`));
  }
  return card;
}

function expertSources(sources) {
  return el("ol", { className: "sources" }, sources.map((s) => el("li", {},
    sourceLink(s.url, `Post ${s.post_id}`, `post ${s.post_id}, ${String(s.date).slice(0, 10)}`),
    " ", el("span", { className: "hint" }, String(s.date ?? "").slice(0, 10)), " ",
    badge(String(s.relevance ?? "")),
    s.excerpt ? el("blockquote", {}, String(s.excerpt)) : null)));
}

function communityInsights(result) {
  const reddit = result && result.reddit_response;
  const summary = result && result.summary;
  if (!reddit && !summary) {
    return [el("p", { className: "placeholder" }, "The Reddit search brought nothing back.")];
  }
  const parts = [];
  if (reddit) parts.push(...redditResponse(reddit));
  if (summary) parts.push(redditSummary(summary));
  return parts;
}

function redditResponse(reddit) {
  const parts = [el("p", { className: "card-meta" }, statusBadge(reddit.status),
    ` ${Number(reddit.threads_drilled) || 0} threads and ${Number(reddit.comments_drilled) || 0}`
      + ` comments read · source: ${String(reddit.source ?? "")} · engine: `,
    el("span", { className: "engine" }, engineLabel(reddit.engine)))];
  if (reddit.timed_out) {
    parts.push(el("p", { className: "warning" }, "The Reddit search ran out of time; this is partial."));
  }
  if ((reddit.errors || []).length) {
    parts.push(el("ul", { className: "error" }, reddit.errors.map((e) => el("li", {}, String(e)))));
  }
  const synthesis = reddit.synthesis;
  if (!synthesis) return parts;
  const sources = synthesis.sources || [];
  const number = new Map(sources.map((s, i) => [String(s.url), i + 1]));
  const resolve = (m) => {
    const n = Number(m[3]);
    return m[3] && sources[n - 1] ? { n, url: sources[n - 1].url } : null;
  };
  const links = (urls) => el("span", { className: "source-links" }, (urls || []).map((url, i) => {
    const n = number.get(String(url));
    return [" ", sourceLink(url, n ? `[${n}]` : `[link ${i + 1}]`, `source ${n || i + 1}`)];
  }));
  parts.push(section("What the community says", prose(synthesis.summary, resolve)));
  if ((synthesis.hidden_gems || []).length) {
    parts.push(section("Hidden gems", bulletList(synthesis.hidden_gems, (g) =>
      [cited(g.text), " ", badge(`▲ ${Number(g.score) || 0}`), links(g.sources)])));
  }
  if ((synthesis.minority_report || []).length) {
    parts.push(section("Minority report", bulletList(synthesis.minority_report, (m) =>
      [cited(m.text), " ", badge(`${Number(m.votes) || 0} votes`), links(m.sources)])));
  }
  if ((synthesis.pivot_alerts || []).length) {
    parts.push(section("Pivot alerts", bulletList(synthesis.pivot_alerts, (p) => [
      el("strong", {}, `${String(p.from_option)} → ${String(p.to_option)}: `), cited(p.text),
      p.first_seen ? ` (${String(p.first_seen).slice(0, 10)} – ${String(p.last_seen ?? "").slice(0, 10)})` : "",
      links(p.sources)])));
  }
  if ((synthesis.comparison_table || []).length) {
    parts.push(section("Comparison", comparisonTable(synthesis.comparison_table, links)));
  }
  if (sources.length) {
    parts.push(section("Sources", el("ol", { className: "sources" }, sources.map((s) =>
      el("li", {}, sourceLink(s.url, String(s.title || s.url)), " ",
        el("span", { className: "hint" }, `(${String(s.kind ?? "")})`))))));
  }
  return parts;
}

function comparisonTable(rows, links) {
  const head = el("tr", {}, ["Option", "Verdict", "Pros", "Cons", "Sources"].map((h) =>
    el("th", { scope: "col" }, h)));
  const body = rows.map((row) => el("tr", {},
    el("th", { scope: "row" }, String(row.option)),
    el("td", {}, String(row.verdict)),
    el("td", {}, bulletList(row.pros)),
    el("td", {}, bulletList(row.cons)),
    el("td", {}, links(row.sources))));
  return el("div", { className: "table-wrap" },
    el("table", {}, el("thead", {}, head), el("tbody", {}, body)));
}

function redditSummary(summary) {
  const sources = summary.sources || [];
  const byPost = new Map(sources.map((s, i) => [String(s.post_id), i + 1]));
  const resolve = (m) => {
    const n = m[1] === "post" ? byPost.get(m[2]) : undefined;
    return n ? { n, url: sources[n - 1].url } : null;
  };
  return el("section", { className: "block reddit-summary" },
    el("h3", {}, "Reddit summary"),
    el("p", { className: "card-meta" }, statusBadge(summary.status), " ",
      badge(engineLabel(summary.engine)), summary.reason ? ` ${String(summary.reason)}` : ""),
    prose(summary.summary, resolve),
    (summary.highlights || []).length
      ? section("Highlights", bulletList(summary.highlights, (h) => cited(h, resolve))) : null,
    (summary.cautions || []).length
      ? section("Cautions", bulletList(summary.cautions, (c) => cited(c, resolve))) : null,
    sources.length ? section("Sources", el("ol", { className: "sources" }, sources.map((s) =>
      el("li", {}, sourceLink(s.url, String(s.title || s.url)), " ",
        el("span", { className: "hint" }, `r/${String(s.subreddit ?? "")}`))))) : null);
}

// ---- Start ----------------------------------------------------------------------------------

$("ask-form").addEventListener("submit", onAsk);
$("auth-form").addEventListener("submit", onKeySubmit);
loadExperts();
