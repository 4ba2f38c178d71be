// Rendering what the server sends: the experts picker, a job's progress, expert answers,
// Community Insights and the other sources (YouTube, Amazon: sources.js). All nodes come from
// the safe builders in dom.js (no HTML parsing of data, only http(s) links);
// ``nameOf(expertId)`` turns an expert id into the name shown on its card.

import {
  $, badge, bulletList, cited, el, engineLabel, prose, section, show, sourceLink, statusBadge,
} from "./dom.js";
import { kindBadge, kindLabel, otherSources, summaryTitle, whereOf } from "./sources.js";

// ---- Experts picker -------------------------------------------------------------------------

export function renderExpertPicker(experts) {
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

// ---- Progress -------------------------------------------------------------------------------

export function addProgress(event) {
  const at = typeof event.at === "string" ? new Date(event.at) : null;
  const time = at && !Number.isNaN(at.getTime()) ? at.toLocaleTimeString() : "";
  $("progress-list").append(el("li", { className: "progress-item" },
    el("span", { className: "phase" }, String(event.phase ?? "")), " ",
    el("span", { className: "message" }, String(event.message ?? "")),
    time ? el("time", { className: "hint", datetime: event.at }, ` ${time}`) : null));
}

export function jobStatus(status) {
  const labels = { queued: "Queued: waiting for a worker…", running: "Researching…",
    done: "Done.", failed: "The job failed." };
  $("job-status").textContent = labels[status] || `Status: ${String(status ?? "unknown")}`;
}

// ---- The result -----------------------------------------------------------------------------

/** Clear the last answer and lay out placeholders for what this request will bring. */
export function startView(request, nameOf) {
  $("progress-list").replaceChildren();
  jobStatus("queued");
  show($("progress"), true);
  $("result-meta").replaceChildren();
  show($("result-error"), false);
  const cards = $("expert-cards");
  cards.replaceChildren(...request.experts.map((id) => expertCard(id, nameOf, null, false)));
  show($("expert-answers"), request.experts.length > 0);
  const sources = request.sources || [];
  $("community-body").replaceChildren(el("p", { className: "placeholder" },
    request.search_reddit ? "Waiting for the Reddit search…" : "Waiting for the search…"));
  show($("community"), request.search_reddit || sources.length > 0);
  $("other-sources-body").replaceChildren(
    el("p", { className: "placeholder" },
      `Waiting for ${sources.map(kindLabel).join(" and ")}…`));
  show($("other-sources"), sources.length > 0);
  show($("results"), true);
}

export function renderJob(job, nameOf) {
  const request = { experts: [], search_reddit: false, sources: [], ...(job.request || {}) };
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
    expertCard(id, nameOf, responses.find((r) => r.expert_id === id) || null, true)));
  show($("expert-answers"), ids.length > 0);

  // Community Insights hold the Reddit answer, or the summary of the videos and products alone.
  const community = Boolean(request.search_reddit || request.sources.length);
  show($("community"), community);
  if (community) $("community-body").replaceChildren(...communityInsights(result, request));
  const fetches = (result && result.source_fetches) || [];
  $("other-sources-body").replaceChildren(...otherSources(fetches));
  show($("other-sources"), fetches.length > 0);
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

/** Resolves ``[post:N]`` markers to the numbered entry of ``sources`` with that post id. */
function byPostId(sources) {
  const byPost = new Map(sources.map((s, i) => [String(s.post_id), i + 1]));
  return (m) => {
    const n = m[1] === "post" ? byPost.get(m[2]) : undefined;
    return n ? { n, url: sources[n - 1].url } : null;
  };
}

// ---- Expert answers -------------------------------------------------------------------------

function expertCard(id, nameOf, response, finished) {
  const card = el("article", { className: "card expert-card", "data-expert": id },
    el("h3", {}, nameOf(id)));
  if (response === null) {
    card.append(el("p", { className: "placeholder" }, finished
      ? "No answer came back from this expert."
      : "Waiting for this expert's answer…"));
    return card;
  }
  const sources = response.main_sources || [];
  card.append(
    el("p", { className: "card-meta" }, statusBadge(response.status), " ",
      badge(String(response.language || "")), " ", badge(engineLabel(response.engine))),
    prose(response.answer, byPostId(sources)));
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

// ---- Community Insights ---------------------------------------------------------------------

function communityInsights(result, request) {
  const reddit = result && result.reddit_response;
  const summary = result && result.summary;
  const synthesis = reddit && reddit.synthesis;
  if (!reddit && !summary) {
    return [el("p", { className: "placeholder" }, request.search_reddit
      ? "The Reddit search brought nothing back." : "The search brought nothing back.")];
  }
  const parts = [];
  if (reddit) parts.push(...redditResponse(reddit));
  // One answer, shown once: its summary, takeaways, the staff-engineer sections, one source list.
  if (summary || synthesis) parts.push(answerBlock(summary, synthesis, summaryTitle(request)));
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
  return parts;
}

/**
 * The one numbered source list: the summary's sources (posts, videos, products), then each
 * thread or comment the sections cite. ``resolve`` turns a stored [post:ID] / [comment:ID]
 * marker into its number, ``links`` numbers a claim's permalinks; ids never reach the page.
 */
function numberedSources(summary, synthesis) {
  const entries = [];
  const byKey = new Map();
  const byUrl = new Map();
  const add = (key, url, item) => {
    const known = byKey.get(key) || byUrl.get(String(url));
    if (known) {
      byKey.set(key, known);
      return;
    }
    entries.push({ ...item, url: String(url) });
    byKey.set(key, entries.length);
    byUrl.set(String(url), entries.length);
  };
  for (const s of (summary && summary.sources) || []) {
    add(`post:${String(s.post_id).toLowerCase()}`, s.url,
      { kind: s.kind || "reddit", title: s.title, where: whereOf(s.kind, s.subreddit) });
  }
  for (const s of (synthesis && synthesis.sources) || []) {
    const comment = s.kind === "comment";
    add(`${comment ? "comment" : "post"}:${String(s.id).toLowerCase()}`, s.url,
      { kind: "reddit", title: comment ? `a comment in “${String(s.title)}”` : s.title, where: "" });
  }
  const resolve = (m) => {
    const n = m[1] ? byKey.get(`${m[1]}:${String(m[2]).toLowerCase()}`) : undefined;
    return n ? { n, url: entries[n - 1].url } : null;
  };
  const links = (urls) => el("span", { className: "source-links" }, (urls || []).map((url) => {
    const n = byUrl.get(String(url));
    return n ? [" ", el("sup", { className: "cite" }, sourceLink(url, `[${n}]`, `source ${n}`))] : [];
  }));
  return { entries, resolve, links };
}

function answerBlock(summary, synthesis, title) {
  const { entries, resolve, links } = numberedSources(summary, synthesis);
  const text = summary ? summary.summary : synthesis.summary;
  const parts = [el("h3", {}, title)];
  if (summary) {
    parts.push(el("p", { className: "card-meta" }, statusBadge(summary.status), " ",
      badge(engineLabel(summary.engine)), summary.reason ? ` ${String(summary.reason)}` : ""));
  }
  parts.push(section("What the community says", prose(text, resolve)));
  if (summary && (summary.highlights || []).length) {
    parts.push(section("Highlights", bulletList(summary.highlights, (h) => cited(h, resolve))));
  }
  if (summary && (summary.cautions || []).length) {
    parts.push(section("Cautions", bulletList(summary.cautions, (c) => cited(c, resolve))));
  }
  if (synthesis) parts.push(...synthesisSections(synthesis, links));
  if (entries.length) {
    parts.push(section("Sources", el("ol", { className: "sources" }, entries.map((s) =>
      el("li", { "data-kind": String(s.kind) }, kindBadge(s.kind), " ",
        sourceLink(s.url, String(s.title || s.url)), " ",
        el("span", { className: "hint" }, String(s.where)))))));
  }
  return el("section", { className: "block reddit-summary" }, parts);
}

function synthesisSections(synthesis, links) {
  const parts = [];
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

