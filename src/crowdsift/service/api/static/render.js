// Rendering what the server sends: the experts picker, a job's progress, expert answers,
// Community Insights and the other sources (YouTube, Amazon: sources.js). All nodes come from
// the safe builders in dom.js (no HTML parsing of data, only http(s) links);
// ``nameOf(expertId)`` turns an expert id into the name shown on its card.

import { answerBlock, citeLink, overallReason } from "./answer.js";
import {
  $, badge, bulletList, el, engineLabel, prose, section, show, sourceLink, statusBadge,
} from "./dom.js";
import { reportLinks } from "./reports.js";
import { kindLabel, otherSources, summaryTitle } from "./sources.js";

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
  cards.replaceChildren(...request.experts.map((id, i) => expertCard(id, nameOf, null, false, i)));
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
  const done = result && job.status === "done";
  $("result-meta").replaceChildren(...(result ? resultMeta(result) : []),
    ...(done ? [reportLinks(String(job.id))] : []));

  // Reddit-only mode (no expert asked) shows no expert section at all, not empty cards.
  const responses = (result && result.expert_responses) || [];
  const ids = request.experts.length ? [...request.experts] : [];
  if (ids.length) responses.forEach((r) => ids.includes(r.expert_id) || ids.push(r.expert_id));
  $("expert-cards").replaceChildren(...ids.map((id, i) =>
    expertCard(id, nameOf, responses.find((r) => r.expert_id === id) || null, true, i)));
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
  const reason = result.status !== "ok" ? overallReason(result) : "";
  return [
    result.sample_data === true ? el("p", { className: "sample-banner", role: "note" },
      el("strong", {}, "Sample data: "),
      "this answer comes from the bundled SAMPLE archive written by the crowdsift project, "
        + "not from real Reddit content.") : null,
    failedSources(result),
    el("p", { className: "question-echo" }, "Question: ", el("q", {}, String(result.question))),
    el("p", {}, "Status: ", statusBadge(result.status), reason ? ` (${reason})` : "",
      " · Engine: ", el("span", { className: "engine" }, engineLabel(result.engine))),
    result.window ? el("p", { className: "window" }, "Window: ", String(result.window)) : null,
  ].filter(Boolean);
}

/** One line per Reddit source that failed (``source_status``): a fallback is never silent. */
function failedSources(result) {
  const failed = (result.source_status || [])
    .filter((s) => ["unreachable", "rate_limited", "auth_failed"].includes(s.status));
  return failed.length ? el("ul", { className: "warning source-status", role: "note" },
    failed.map((s) => el("li", {},
      `${String(s.source)} ${String(s.status).replace("_", " ")}: ${String(s.detail ?? "")}`)))
    : null;
}

/** An expert's own numbering: its sources in the order the answer first cites them (the
 * uncited after), and a resolver turning ``[post:N]`` into a ``[n]`` link into its list. */
function expertNumbers(response, prefix) {
  const sources = response.main_sources || [];
  const order = [];
  for (const m of String(response.answer ?? "").matchAll(/\[post:([^\]\s]+)\]/gi)) {
    const source = sources.find((s) => String(s.post_id) === m[1]);
    if (source && !order.includes(source)) order.push(source);
  }
  sources.forEach((s) => order.includes(s) || order.push(s));
  const resolve = (m) => {
    const n = m[1] === "post" ? order.findIndex((s) => String(s.post_id) === m[2]) + 1 : 0;
    return n ? { n, cite: citeLink(prefix, n) } : null;
  };
  return { order, resolve };
}

// ---- Expert answers -------------------------------------------------------------------------

function expertCard(id, nameOf, response, finished, index) {
  const card = el("article", { className: "card expert-card", "data-expert": id },
    el("h3", {}, nameOf(id)));
  if (response === null) {
    card.append(el("p", { className: "placeholder" }, finished
      ? "No answer came back from this expert."
      : "Waiting for this expert's answer…"));
    return card;
  }
  const prefix = `expert-${index}`;
  const { order, resolve } = expertNumbers(response, prefix);
  card.append(
    el("p", { className: "card-meta" }, statusBadge(response.status), " ",
      badge(String(response.language || "")), " ", badge(engineLabel(response.engine))),
    prose(response.answer, resolve));
  if ((response.notes || []).length) card.append(section("Notes", bulletList(response.notes)));
  if (order.length) card.append(section("Sources", expertSources(order, prefix)));
  for (const part of response.comment_sections || []) {
    card.append(el("details", { className: "comments" },
      el("summary", {}, String(part.title || part.kind)), prose(part.text)));
  }
  if ((response.removed_citations || []).length) {
    const removed = response.removed_citations.length;
    card.append(el("p", { className: "hint" },
      `${removed} citation${removed === 1 ? "" : "s"} removed (not in the evidence)`));
  }
  return card;
}

function expertSources(sources, prefix) {
  return el("ol", { className: "sources" }, sources.map((s, i) => el("li", { id: `${prefix}-src-${i + 1}` },
    el("span", { className: "src-n" }, `[${i + 1}]`), " ",
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
  if (reddit) parts.push(...redditResponse(reddit, result));
  // One answer, shown once: its summary, takeaways, the staff-engineer sections, one source list.
  if (summary || synthesis) parts.push(answerBlock(result, summaryTitle(request)));
  return parts;
}

/** The Reddit run in numbers; its badge is the OVERALL status (never "ok" on a partial result). */
function redditResponse(reddit, result) {
  const parts = [el("p", { className: "card-meta" }, statusBadge(result.status),
    ` ${Number(reddit.threads_drilled) || 0} threads and ${Number(reddit.comments_drilled) || 0}`
      + ` comments read · source: ${String(reddit.source ?? "")}`
      + `${result.sample_data === true ? " (SAMPLE data)" : ""} · engine: `,
    el("span", { className: "engine" }, engineLabel(reddit.engine)))];
  if (reddit.timed_out) {
    parts.push(el("p", { className: "warning" }, "The Reddit search ran out of time; this is partial."));
  }
  if ((reddit.errors || []).length) {
    parts.push(el("ul", { className: "error" }, reddit.errors.map((e) => el("li", {}, String(e)))));
  }
  return parts;
}
