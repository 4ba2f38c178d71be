// Where evidence comes from: the kind labels (Reddit, YouTube, Amazon) on cited sources, and the
// "Other sources" section: what each YouTube / Amazon search kept, or why it did not run.
//
// Titles, channels, product names and comments come from strangers, so they are built with the
// safe helpers of dom.js like everything else; the section mirrors the terminal's
// "Other sources" block (crowdsift/render.py) and adds the items themselves.

import { badge, el, sourceLink } from "./dom.js";

const KIND_LABELS = { reddit: "Reddit", youtube: "YouTube", amazon: "Amazon" };

/** "Reddit", "YouTube" or "Amazon"; an unknown kind is shown as it came. */
export function kindLabel(kind) {
  const value = String(kind ?? "reddit");
  return Object.hasOwn(KIND_LABELS, value) ? KIND_LABELS[value] : value;
}

/** The small label naming a source's kind, styled per kind. */
export function kindBadge(kind) {
  const value = String(kind ?? "reddit");
  return badge(kindLabel(value), Object.hasOwn(KIND_LABELS, value) ? `kind-${value}` : "");
}

/** Where a cited source lives: r/subreddit, or the YouTube channel / Amazon marketplace. */
export function whereOf(kind, where) {
  const value = String(where ?? "");
  return !kind || kind === "reddit" ? `r/${value}` : value;
}

/** "Reddit summary", "Reddit + YouTube summary" … after what the request searched. */
export function summaryTitle(request) {
  const kinds = [...(request.search_reddit ? ["reddit"] : []), ...(request.sources || [])];
  return `${kinds.length ? kinds.map(kindLabel).join(" + ") : "Community"} summary`;
}

// ---- Other sources ----------------------------------------------------------------------------

/** One block per YouTube / Amazon search in ``result.source_fetches``. */
export function otherSources(fetches) {
  return (fetches || []).map((fetched) => {
    const items = fetched.items || [];
    const failed = !fetched.skipped && !items.length && (fetched.errors || []).length > 0;
    const style = fetched.skipped ? "hint skip-notice" : failed ? "error" : "card-meta";
    const block = el("section", { className: "block source-fetch", "data-kind": fetched.kind },
      el("h3", {}, kindBadge(fetched.kind)), el("p", { className: style }, outcome(fetched)));
    // Without items the first error is the outcome line; with items (a failed refetch keeps
    // the first page) every error is listed under the counts.
    const errors = (fetched.skipped ? [] : fetched.errors || []).slice(items.length ? 0 : 1);
    if (errors.length) {
      block.append(el("ul", { className: "error" }, errors.map((e) => el("li", {}, String(e)))));
    }
    // What the search kept, as a plain list: the answer's one numbered source list is the
    // only numbered list an answer has, and these items are cited there when the answer uses them.
    if (items.length) {
      block.append(el("ul", { className: "items" }, items.map((item) =>
        evidenceItem(item, fetched.kind))));
    }
    return block;
  });
}

/** The one-line skip notice, the first error of a search that found nothing, or what the
 * gate kept (as the terminal's "Other sources" block says it). */
function outcome(fetched) {
  const kept = (fetched.items || []).length;
  if (fetched.skipped) return String(fetched.skipped);
  if ((fetched.errors || []).length && !kept) return `Failed: ${String(fetched.errors[0])}`;
  const extras = [
    `yield ${Math.round((Number(fetched.yield_ratio) || 0) * 100)}%`,
    fetched.refetched ? "refetched once" : null,
    fetched.failed_open ? "gate failed open" : null,
  ].filter(Boolean);
  return `${kept} relevant of ${Number(fetched.fetched) || 0} (${extras.join(", ")})`;
}

function evidenceItem(item, kind) {
  const details = [
    String(item.where ?? ""),
    ...metricTexts(item.metrics),
    item.published_at ? String(item.published_at).slice(0, 10) : null,
  ].filter(Boolean);
  const comments = item.comments || [];
  return el("li", { className: "evidence-item", "data-id": String(item.id ?? "") },
    sourceLink(item.url, String(item.title || item.url),
      `${kindLabel(kind)}: ${String(item.title ?? "")}`),
    " ", el("span", { className: "hint" }, details.join(" · ")),
    comments.length ? el("details", { className: "comments" },
      el("summary", {}, kind === "amazon" ? "Review excerpts" : "Top comments"),
      el("ul", {}, comments.map((c) => el("li", {}, String(c.text ?? ""), " ",
        badge(`▲ ${count(c.likes)}`))))) : null);
}

const METRICS = [["views", "views"], ["likes", "likes"], ["comments", "comments"],
  ["reviews", "reviews"]];

/** The metrics the API offered: "★ 4.6", "12K views" …; absent ones are left out. */
function metricTexts(metrics) {
  const m = metrics && typeof metrics === "object" ? metrics : {};
  const texts = [];
  if (Number.isFinite(m.rating)) texts.push(`★ ${m.rating.toFixed(1)}`);
  for (const [key, label] of METRICS) {
    if (Number.isFinite(m[key])) texts.push(`${count(m[key])} ${label}`);
  }
  return texts;
}

const COMPACT = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

function count(value) {
  const n = Number(value);
  return Number.isFinite(n) ? COMPACT.format(n) : "0";
}
