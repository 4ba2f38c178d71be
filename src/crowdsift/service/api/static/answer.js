// The one Reddit answer: direct answer, highlights and cautions, the staff-engineer sections that
// have content, then ONE numbered source list that every [n] links into. Each sentence is shown
// once (claims.js keeps it where it first appears). The list holds what the shown claims cite:
// each thread (video, product) once, linked, with its cited comments under it, and every
// numbered entry linked by the sentence it supports. The numbering mirrors the terminal's
// (crowdsift's pipeline/synthesis/display.py): groups in reading order, numbers down the list;
// threads read but never cited are one "Also read" line. The summary, highlights and cautions
// are numbered from their citation lists (``summary.claims``), never from markers in their
// text; stored ids (post:ID, comment:ID) never reach the page. All nodes come from dom.js.

import {
  badge, bulletList, cited, citedProse, citedSpans, el, engineLabel, section, sourceLink,
  statusBadge,
} from "./dom.js";
import { quoteOf, shownAnswer } from "./claims.js";
import { kindBadge, whereOf } from "./sources.js";

/** A URL compared loosely, as crowdsift's url_key: host without www./m., path, YouTube's v. */
export function urlKey(raw) {
  const text = String(raw ?? "").trim();
  try {
    const url = new URL(text.includes("://") ? text : `https://${text}`);
    const host = url.hostname.toLowerCase().replace(/^www\./, "").replace(/^m\./, "");
    const path = url.pathname.replace(/\/+$/, "").toLowerCase();
    const video = host === "youtube.com" && path === "/watch"
      ? `?v=${(url.searchParams.get("v") || "").toLowerCase()}` : "";
    return `${host}${path}${video}`;
  } catch {
    return text.toLowerCase();
  }
}

function subredditOf(url) {
  const match = /\/r\/([A-Za-z0-9_]+)\//.exec(String(url ?? ""));
  return match ? `r/${match[1]}` : "";
}

/** Every source once (merged by key or permalink), each with the group it is listed under. */
function entriesOf(summary, synthesis) {
  const entries = [];
  const add = (entry) => {
    const alias = entry.url ? urlKey(entry.url) : "";
    const known = entries.find((e) => e.keys.some((k) => entry.keys.includes(k))
      || (alias && e.alias === alias));
    if (known) {
      entry.keys.forEach((k) => known.keys.includes(k) || known.keys.push(k));
      return;
    }
    entries.push({ ...entry, alias });
  };
  for (const s of (summary && summary.sources) || []) {
    const key = `post:${String(s.post_id)}`.toLowerCase();
    add({ keys: [key], url: String(s.url ?? ""), comment: false, kind: s.kind || "reddit",
      where: whereOf(s.kind, s.subreddit), title: String(s.title ?? ""), group: key });
  }
  for (const s of (synthesis && synthesis.sources) || []) {
    const comment = s.kind === "comment";
    add({ keys: [`${comment ? "comment" : "post"}:${String(s.id)}`.toLowerCase()],
      url: String(s.url ?? ""), comment, kind: "reddit", where: subredditOf(s.url),
      title: String(s.title ?? ""), group: "" });
  }
  const threads = entries.filter((e) => !e.comment);
  for (const entry of entries) {
    if (entry.group) continue;
    if (!entry.comment) { entry.group = entry.keys[0]; continue; }
    const parent = threads.find((t) => t.url && entry.alias.startsWith(`${t.alias}/`));
    const id = /\/comments\/([A-Za-z0-9]+)(?:\/|$)/.exec(entry.url);
    const named = id && threads.find((t) => t.keys.includes(`post:${id[1].toLowerCase()}`));
    const titled = threads.find((t) => t.title === entry.title);
    const found = parent || named || titled;
    entry.group = found ? found.group || found.keys[0]
      : id ? `thread:${id[1].toLowerCase()}` : `title:${entry.title}`;
  }
  return entries;
}

/** A thread's permalink from one of its comments' ("…/comments/ID/slug/COMMENT/" → "…/slug/"). */
export function threadUrlOf(commentUrl) {
  const match = /^(https?:\/\/[^/]+\/r\/[A-Za-z0-9_]+\/comments\/[A-Za-z0-9]+\/[^/?#]+\/)[^/?#]+\/?$/
    .exec(String(commentUrl ?? "").trim());
  return match ? match[1] : "";
}

/**
 * The numbered list for the claims shown, in reading order (``{ text, refs }``, refs being
 * citation keys or permalinks): groups of { thread entry|null, comments, url }, each entry
 * with the quote of the first claim citing it; ``alsoRead`` are the threads (videos,
 * products) the answer read but quotes nothing from; lookups by key and URL give numbers.
 */
export function sourceList(summary, synthesis, claims) {
  const entries = entriesOf(summary, synthesis);
  const find = (ref) => (/^(post|comment):/i.test(ref)
    ? entries.find((e) => e.keys.includes(ref.toLowerCase()))
    : entries.find((e) => e.alias && e.alias === urlKey(ref)));
  const quotes = new Map();
  for (const claim of claims) {
    for (const ref of claim.refs) {
      const entry = find(ref);
      if (entry && !quotes.has(entry)) {
        quotes.set(entry, claim.quoted === false ? claim.text : `“${quoteOf(claim.text)}”`);
      }
    }
  }
  const groups = new Map();
  for (const entry of quotes.keys()) groups.set(entry.group, [...(groups.get(entry.group) || []), entry]);
  const byKey = new Map();
  const byUrl = new Map();
  let count = 0;
  const number = (entry) => {
    count += 1;
    entry.keys.forEach((k) => byKey.set(k, count));
    if (entry.alias) byUrl.set(entry.alias, count);
    return { ...entry, n: count, quote: quotes.get(entry) };
  };
  const listed = [...groups.entries()].map(([group, members]) => {
    const thread = entries.find((e) => e.group === group && !e.comment) || null;
    const head = thread || members[0];
    const cited = thread && members.includes(thread) ? number(thread) : null;
    return {
      thread: cited,
      url: thread ? thread.url : threadUrlOf(head.url),
      title: head.title,
      where: head.where || subredditOf(head.url),
      kind: head.kind,
      comments: members.filter((e) => e.comment).map(number),
    };
  });
  const alsoRead = entries.filter((e) => !e.comment && !groups.has(e.group));
  return { groups: listed, alsoRead, byKey, byUrl };
}

/** Why the overall status is not ok: the result's reason, else what its parts report. */
export function overallReason(result) {
  if (typeof result.reason === "string" && result.reason) return result.reason;
  const reasons = [];
  if (result.summary && result.summary.reason) reasons.push(String(result.summary.reason));
  const reddit = result.reddit_response;
  if (reddit && reddit.timed_out) reasons.push("the Reddit search ran out of time");
  if (reddit) (reddit.errors || []).forEach((e) => reasons.push(String(e)));
  if (result.fetch) (result.fetch.errors || []).forEach((e) => reasons.push(String(e)));
  for (const expert of result.expert_responses || []) {
    if (!["ok", "no_results"].includes(expert.status)) {
      reasons.push(`expert ${String(expert.expert_id)} ${String(expert.status)}`);
    }
  }
  for (const fetched of result.source_fetches || []) {
    if ((fetched.errors || []).length) reasons.push(`${String(fetched.kind)} failed: ${String(fetched.errors[0])}`);
  }
  const unique = [...new Set(reasons.map((r) => r.trim()).filter(Boolean))];
  if (!unique.length) return "a part of the run did not finish";
  return unique.slice(0, 3).join("; ") + (unique.length > 3 ? `; and ${unique.length - 3} more` : "");
}

function anchor(prefix, n) {
  return `${prefix}-src-${n}`;
}

/** A superscript [n] that jumps to the list entry (the entry links out). */
export function citeLink(prefix, n) {
  return el("sup", { className: "cite" },
    el("a", { href: `#${anchor(prefix, n)}`, "aria-label": `source ${n}` }, `[${n}]`));
}

/**
 * The Reddit answer block. ``status`` and ``reason`` are the OVERALL result's, so this block
 * never says ok when the result is partial.
 */
export function answerBlock(result, title, prefix = "reddit") {
  const summary = result.summary || null;
  const synthesis = (result.reddit_response && result.reddit_response.synthesis) || null;
  const shown = shownAnswer(summary, synthesis);
  const list = sourceList(summary, synthesis, shown.claims);
  const link = (key) => {
    const n = list.byKey.get(String(key).toLowerCase());
    return n ? { n, cite: citeLink(prefix, n) } : null;
  };
  const links = (urls) => el("span", { className: "source-links" },
    [...new Set((urls || []).map((url) => list.byUrl.get(urlKey(url))).filter(Boolean))]
      .map((n) => [" ", citeLink(prefix, n)]));
  const engine = (summary && summary.engine) || result.engine;
  // The reason for a partial status is stated once, beside "Status:" above the answers.
  const parts = [el("h3", {}, title),
    el("p", { className: "card-meta answer-meta" }, statusBadge(result.status), " ",
      badge(engineLabel(engine)))];
  parts.push(section("What the community says", citedProse(shown.text, link)));
  const items = (heading, texts) => texts.length
    && parts.push(section(heading, bulletList(texts, (t) => citedSpans(t, link))));
  items("Highlights", shown.highlights);
  items("Cautions", shown.cautions);
  parts.push(...synthesisSections(shown, links));
  if (list.groups.length) parts.push(section("Sources", sourcesList(list, prefix)));
  if (list.alsoRead.length) parts.push(alsoRead(list.alsoRead));
  return el("section", { className: "block reddit-summary" }, parts);
}

/** Each thread (video, product) once, linked; under it its cited comments, each numbered
 * and linked by the sentence it supports. A thread cited itself is numbered too. */
function sourcesList(list, prefix) {
  return el("ol", { className: "sources" }, list.groups.map((group) => {
    const thread = group.thread;
    const head = el("p", { className: "src-thread" },
      thread ? [el("span", { className: "src-n" }, `[${thread.n}]`), " "] : null,
      kindBadge(group.kind), " ",
      sourceLink(group.url, String(group.title || group.url),
        thread ? `${String(group.title)}, source ${thread.n}` : String(group.title)),
      " ", el("span", { className: "hint" }, String(group.where)));
    const comments = group.comments.length
      ? el("ul", { className: "cited-comments" }, group.comments.map((c) =>
        el("li", { id: anchor(prefix, c.n), className: "src-entry" },
          el("span", { className: "src-n" }, `[${c.n}]`), " ",
          sourceLink(c.url, c.quote, `comment, source ${c.n}`))))
      : null;
    return el("li", { className: thread ? "src-group src-entry" : "src-group",
      "data-kind": String(group.kind), id: thread ? anchor(prefix, thread.n) : null },
    head, thread ? el("p", { className: "src-quote" }, thread.quote) : null, comments);
  }));
}

/** The threads the answer read without quoting them: linked, not numbered (nothing cites them). */
function alsoRead(entries) {
  return el("p", { className: "also-read hint" }, "Also read, not quoted: ",
    entries.map((e, i) => [i ? " · " : "", sourceLink(e.url, String(e.title || e.url))]));
}

function synthesisSections(shown, links) {
  const parts = [];
  if (shown.gems.length) {
    parts.push(section("Hidden gems", bulletList(shown.gems, (g) =>
      [cited(g.text), " ", badge(`▲ ${Number(g.score) || 0}`), links(g.sources)])));
  }
  if (shown.minority.length) {
    parts.push(section("Minority report", bulletList(shown.minority, (m) =>
      [cited(m.text), " ", badge(`${Number(m.votes) || 0} votes`), links(m.sources)])));
  }
  if (shown.pivots.length) {
    parts.push(section("Pivot alerts", bulletList(shown.pivots, (p) => [
      el("strong", {}, `${String(p.from_option)} → ${String(p.to_option)}: `), cited(p.text),
      p.first_seen ? ` (${String(p.first_seen).slice(0, 10)} – ${String(p.last_seen ?? "").slice(0, 10)})` : "",
      links(p.sources)])));
  }
  if (shown.table.length) {
    parts.push(section("Comparison", comparisonTable(shown.table, links)));
  }
  return parts;
}

/** A pros / cons cell; one whose sentences are all quoted above says so. */
const cell = (items) => (items.length ? bulletList(items)
  : el("span", { className: "hint" }, "(quoted above)"));

function comparisonTable(rows, links) {
  const head = el("tr", {}, ["Option", "Verdict", "Pros", "Cons", "Sources"].map((h) =>
    el("th", { scope: "col" }, h)));
  const body = rows.map((row) => el("tr", {},
    el("th", { scope: "row" }, String(row.option)),
    el("td", {}, String(row.verdict)),
    el("td", {}, cell(row.pros)),
    el("td", {}, cell(row.cons)),
    el("td", {}, links(row.sources))));
  return el("div", { className: "table-wrap" },
    el("table", {}, el("thead", {}, head), el("tbody", {}, body)));
}
