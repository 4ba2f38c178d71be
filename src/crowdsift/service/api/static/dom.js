// Safe DOM building blocks for the crowdsift page.
//
// Everything the server sends is data fetched from strangers (Reddit posts, channel archives),
// so it reaches the DOM through textContent / createElement only — never innerHTML — and only
// http(s) URLs become links. Every other module builds its nodes with these helpers so that this
// file is the one place to review for escaping.

const CITATION = /\[(post|comment):([^\]\s]+)\]|\[(\d{1,3})\]/g;

export const $ = (id) => document.getElementById(id);

export function el(tag, props = {}, ...children) {
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

export function show(node, visible) {
  node.hidden = !visible;
}

/** The URL if it is an absolute http(s) URL, else null (javascript:, data:, relative …). */
export function safeUrl(raw) {
  if (typeof raw !== "string") return null;
  try {
    const url = new URL(raw.trim());
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A link that opens the source in a new tab, or plain text when the URL is not http(s). */
export function sourceLink(raw, label, description) {
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

/** Text with its citation markers ([post:12], [3]) turned into links where resolvable;
 * ``resolve(match)`` gives ``{ n, cite }`` (a ready node) or ``{ n, url }``. A stored id that
 * resolves nowhere is left out: internal ids never reach the page. */
export function cited(text, resolve) {
  const value = String(text ?? "");
  const nodes = [];
  let last = 0;
  for (const match of value.matchAll(CITATION)) {
    if (match.index > last) nodes.push(value.slice(last, match.index));
    const target = resolve ? resolve(match) : null;
    if (target && target.cite) nodes.push(target.cite);
    else if (target) {
      nodes.push(el("sup", { className: "cite" },
        sourceLink(target.url, `[${target.n}]`, `source ${target.n}`)));
    } else if (!match[1]) nodes.push(match[0]); // a stored id that resolves nowhere is dropped
    if (match[1] && !target && nodes.length && typeof nodes[nodes.length - 1] === "string") {
      nodes[nodes.length - 1] = nodes[nodes.length - 1].replace(/[ \t]+$/, "");
    }
    last = match.index + match[0].length;
  }
  nodes.push(value.slice(last));
  return nodes;
}

/** A cited text (spans of prose, each with the citation keys after it: ``claims.spansOf``)
 * as nodes: the prose as text, each key of a list as the ``{ n, cite }`` ``link(key)`` gives,
 * each number once. A key it gives nothing for is left out (internal ids never reach the
 * page); the prose is never searched for markers, so "[post:x]" a stranger wrote stays text. */
export function citedSpans(spans, link) {
  const nodes = [];
  for (const span of spans) {
    const numbers = new Set();
    const links = [];
    for (const key of span.cites) {
      const target = link ? link(key) : null;
      if (target && !numbers.has(target.n)) {
        numbers.add(target.n);
        links.push(target.cite);
      }
    }
    nodes.push(links.length || !span.cites.length ? span.text : span.text.replace(/[ \t]+$/, ""));
    nodes.push(...links);
  }
  return nodes;
}

/** The lines of a cited text; a citation list stays with the line its prose ends. */
function linesOf(spans) {
  const lines = [[]];
  for (const span of spans) {
    const parts = span.text.split(/\r?\n/);
    parts.forEach((part, i) => {
      if (i) lines.push([]);
      lines[lines.length - 1].push({ text: part, cites: i === parts.length - 1 ? span.cites : [] });
    });
  }
  return lines;
}

/** ``prose`` for a cited text: paragraphs and "- " bullet lists, each list linked by ``link``. */
export function citedProse(spans, link) {
  const box = el("div", { className: "prose" });
  let list = null;
  for (const line of linesOf(spans)) {
    const bullet = /^\s*[-*•]\s+/.exec(line[0].text);
    if (bullet) {
      const rest = [{ ...line[0], text: line[0].text.slice(bullet[0].length) }, ...line.slice(1)];
      if (list === null) box.append((list = el("ul")));
      list.append(el("li", {}, citedSpans(rest, link)));
    } else {
      list = null;
      if (line.some((s) => s.text.trim() || s.cites.length)) {
        box.append(el("p", {}, citedSpans(line, link)));
      }
    }
  }
  return box;
}

/** Paragraphs and "- " bullet lists, as the engines write them. */
export function prose(text, resolve) {
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

export function badge(text, kind) {
  return el("span", { className: `badge ${kind ? `badge-${kind}` : ""}`.trim() }, text);
}

export function statusBadge(status) {
  const value = String(status ?? "unknown");
  const kind = ["ok", "partial", "error", "failed", "no_results"].includes(value) ? value : "";
  return badge(value.replace("_", " "), kind);
}

export function engineLabel(engine) {
  if (engine === "local") return "local — extractive, not an LLM";
  if (engine === "openai") return "openai (LLM)";
  return String(engine || "unknown");
}

export function section(title, ...children) {
  return el("section", { className: "block" }, el("h3", { text: title }), children);
}

export function bulletList(items, render = (x) => cited(x)) {
  return el("ul", {}, (items || []).map((item) => el("li", {}, render(item))));
}
