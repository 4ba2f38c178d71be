// The one Reddit answer: direct answer, highlights and cautions, the staff-engineer sections that
// have content, then ONE numbered source list — each source once, a comment under its thread —
// that every [n] links into. The numbering mirrors the terminal's (crowdsift's
// pipeline/synthesis/display.py, complete list): groups in reading order, numbers down the list.
// Stored ids ([post:ID], [comment:ID]) never reach the page. All nodes come from dom.js.

import { badge, bulletList, cited, el, engineLabel, prose, section, sourceLink, statusBadge }
  from "./dom.js";
import { kindBadge, whereOf } from "./sources.js";

const MARKER = /\[(post|comment):([^\]\s]+)\]/gi;

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

/** Citation keys of a text in reading order. */
function refsIn(text) {
  return [...String(text ?? "").matchAll(MARKER)].map((m) => `${m[1]}:${m[2]}`.toLowerCase());
}

/** The numbered list: groups of { thread entry|null, comments }, and lookups by key and URL. */
export function sourceList(summary, synthesis, refs) {
  const entries = entriesOf(summary, synthesis);
  const find = (ref) => (/^(post|comment):/i.test(ref)
    ? entries.find((e) => e.keys.includes(ref.toLowerCase()))
    : entries.find((e) => e.alias && e.alias === urlKey(ref)));
  const chosen = [];
  for (const ref of refs) {
    const entry = find(ref);
    if (entry && !chosen.includes(entry)) chosen.push(entry);
  }
  entries.forEach((e) => chosen.includes(e) || chosen.push(e));
  const groups = new Map();
  chosen.forEach((e) => groups.set(e.group, [...(groups.get(e.group) || []), e]));
  const byKey = new Map();
  const byUrl = new Map();
  let count = 0;
  const number = (entry) => {
    count += 1;
    entry.keys.forEach((k) => byKey.set(k, count));
    if (entry.alias) byUrl.set(entry.alias, count);
    return { ...entry, n: count };
  };
  const listed = [...groups.entries()].map(([group, members]) => {
    const thread = entries.find((e) => e.group === group && !e.comment) || null;
    const head = thread || members[0];
    return {
      thread: thread ? number(thread) : null,
      title: head.title,
      where: head.where || subredditOf(head.url),
      kind: head.kind,
      comments: members.filter((e) => e.comment).map(number),
    };
  });
  return { groups: listed, byKey, byUrl };
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
  const text = summary ? summary.summary : synthesis.summary;
  const highlights = (summary && summary.highlights) || [];
  const cautions = (summary && summary.cautions) || [];
  const sectionRefs = [
    ...((synthesis && synthesis.hidden_gems) || []), ...((synthesis && synthesis.minority_report) || []),
    ...((synthesis && synthesis.pivot_alerts) || []), ...((synthesis && synthesis.comparison_table) || []),
  ].flatMap((item) => item.sources || []);
  const refs = [text, ...highlights, ...cautions].flatMap(refsIn).concat(sectionRefs);
  const list = sourceList(summary, synthesis, refs);
  const resolve = (m) => {
    const n = m[1] ? list.byKey.get(`${m[1]}:${m[2]}`.toLowerCase()) : undefined;
    return n ? { n, cite: citeLink(prefix, n) } : null;
  };
  const links = (urls) => el("span", { className: "source-links" }, (urls || []).map((url) => {
    const n = list.byUrl.get(urlKey(url));
    return n ? [" ", citeLink(prefix, n)] : [];
  }));
  const engine = (summary && summary.engine) || result.engine;
  // The reason for a partial status is stated once, beside "Status:" above the answers.
  const parts = [el("h3", {}, title),
    el("p", { className: "card-meta answer-meta" }, statusBadge(result.status), " ",
      badge(engineLabel(engine)))];
  parts.push(section("What the community says", prose(text, resolve)));
  if (highlights.length) parts.push(section("Highlights", bulletList(highlights, (h) => cited(h, resolve))));
  if (cautions.length) parts.push(section("Cautions", bulletList(cautions, (c) => cited(c, resolve))));
  if (synthesis) parts.push(...synthesisSections(synthesis, links));
  if (list.groups.length) parts.push(section("Sources", sourcesList(list, prefix)));
  return el("section", { className: "block reddit-summary" }, parts);
}

function sourcesList(list, prefix) {
  return el("ol", { className: "sources" }, list.groups.map((group) => {
    const head = group.thread
      ? [el("span", { className: "src-n" }, `[${group.thread.n}]`), " ", kindBadge(group.kind), " ",
        sourceLink(group.thread.url, String(group.title || group.thread.url)), " ",
        el("span", { className: "hint" }, String(group.where))]
      : [kindBadge(group.kind), " ", el("span", { className: "thread-title" }, String(group.title)),
        " ", el("span", { className: "hint" }, String(group.where))];
    const comments = group.comments.length
      ? el("ul", { className: "cited-comments" }, group.comments.map((c) =>
        el("li", { id: anchor(prefix, c.n) }, el("span", { className: "src-n" }, `[${c.n}]`), " ",
          sourceLink(c.url, "comment", `comment, source ${c.n}`))))
      : null;
    return el("li", { "data-kind": String(group.kind),
      id: group.thread ? anchor(prefix, group.thread.n) : null }, head, comments);
  }));
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
