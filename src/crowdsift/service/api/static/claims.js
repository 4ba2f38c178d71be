// The sentences of one answer, as text (no DOM): which sentence a section may still show, and
// which claim each source supports.
//
// The summary, highlights and cautions arrive as cited texts (``summary.claims``): spans of
// prose, each with the citation keys that follow it ("post:ID", "comment:ID"). The page reads
// those lists and never looks for markers in prose, so a stranger's literal "[post:x]" inside
// a quote stays prose. The staff-engineer sections are plain text with their own ``sources``.
//
// The synthesis may put one sentence in two sections (a caution that opens a minority-report
// item, a hidden gem already quoted in the summary, a comparison cell repeating a highlight).
// A reader should meet each sentence once, so the page keeps it where it first appears in
// reading order and drops it from later sections (``Shown``). Sentences are compared by their
// words: case, quotes, punctuation, citations and a trailing "(12 points)" do not count.

/** A quote's vote tag, "(6 points)": part of the sentence before it, not a sentence. */
const VOTES = String.raw`\(\d[\d,.]*k?\s+(?:points?|votes?|upvotes?)\)`;
/** Vote tags alone: they belong to the sentence before them. */
const ATTACHMENT = new RegExp(String.raw`^(?:\s*${VOTES})+\s*$`, "i");
/** After . ! ? … (and closing quotes or brackets): a sentence ends there. */
const BOUNDARY = /(?<=[.!?…]["”’)\]]*)\s+/;
/** What a writer puts after a citation list to close the claim it ends. */
const LEAD = /^[.!?;:,]+/;
const TRAILING_VOTES = new RegExp(String.raw`\s*${VOTES}\s*$`, "i");
const QUOTES = /^["“”‘’'«»\s]+|["“”‘’'«»\s]+$/g;
const QUOTE_CHARS = 160;

/** A cited text as the server sends it (``[{ text, cites }]``), every part a string; text
 * with no list of its own (a gem, a table cell) is one span citing nothing. */
export function spansOf(value) {
  if (!Array.isArray(value)) return [{ text: String(value ?? ""), cites: [] }];
  return value.map((span) => ({
    text: String((span && span.text) ?? ""),
    cites: ((span && span.cites) || []).map(String),
  }));
}

/** Prose with the gaps a left-out list leaves closed ("it ." → "it."), one space each. */
function tidied(text) {
  return String(text ?? "").replace(/[ \t]+([.,;:!?])/g, "$1").replace(/[ \t]{2,}/g, " ").trim();
}

/** The sentences of a cited text's prose, each with the vote tags after it and the
 * punctuation that closes it after its citation list. */
export function sentences(spans) {
  const pieces = [];
  spans.forEach((span, index) => {
    let text = span.text;
    const lead = index && spans[index - 1].cites.length ? LEAD.exec(text) : null;
    if (lead && pieces.length) {
      pieces[pieces.length - 1] += lead[0];
      text = text.slice(lead[0].length);
    }
    for (const raw of text.split(BOUNDARY)) {
      const piece = raw.trim();
      if (!piece) continue;
      if (pieces.length && ATTACHMENT.test(piece)) pieces[pieces.length - 1] += ` ${piece}`;
      else pieces.push(piece);
    }
  });
  return pieces;
}

/** What two copies of a sentence have in common: its words, lower case. */
export function normalised(sentence) {
  let text = String(sentence ?? "");
  while (TRAILING_VOTES.test(text)) text = text.replace(TRAILING_VOTES, "");
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/** The sentences already on the page; ``keep`` gives what of a text is new. */
export class Shown {
  constructor() {
    this.seen = new Set();
  }

  /** Record every sentence of ``spans`` (the first section, shown whole). */
  add(spans) {
    sentences(spans).forEach((s) => normalised(s) && this.seen.add(normalised(s)));
  }

  /** ``spans`` without the sentences shown before (every citation kept, after the sentences
   * left when one was dropped), or null when nothing of it is new. The new ones are then
   * shown. */
  keep(spans) {
    const pieces = sentences(spans);
    const fresh = [];
    for (const piece of pieces) {
      const key = normalised(piece);
      if (key && this.seen.has(key)) continue;
      if (key) this.seen.add(key);
      fresh.push(piece);
    }
    if (!fresh.some((p) => normalised(p))) return null;
    if (fresh.length === pieces.length) return spans;
    const cites = [...new Set(spans.flatMap((span) => span.cites))];
    const text = tidied(fresh.join(" "));
    return [{ text: cites.length ? `${text} ` : text, cites }];
  }

  /** ``keep`` for plain text (a gem, a table cell): the text, what is new of it, or null. */
  keepText(text) {
    const spans = spansOf(String(text ?? ""));
    const kept = this.keep(spans);
    return kept === null ? null : kept === spans ? String(text ?? "") : kept[0].text;
  }
}

/** The claims of a cited text: each is the prose up to a citation list (and the punctuation
 * closing it), with the list's keys; a list with no prose of its own joins the claim before. */
export function citedClaims(spans) {
  const claims = [];
  spans.forEach((span, index) => {
    const next = spans[index + 1];
    const lead = index && spans[index - 1].cites.length ? LEAD.exec(span.text) : null;
    const close = next && span.cites.length ? LEAD.exec(next.text) : null;
    if (!span.cites.length) return;
    const words = span.text.slice(lead ? lead[0].length : 0) + (close ? close[0] : "");
    const refs = span.cites.map((key) => key.toLowerCase());
    const claim = tidied(words.replace(/^\s*[-*•]\s+/gm, ""));
    if (claim.replace(/[\s.,;:!?]/g, "")) claims.push({ text: claim, refs });
    else if (claims.length) {
      const last = claims[claims.length - 1];
      last.text = tidied(`${last.text}${claim}`);
      last.refs.push(...refs);
    }
  });
  return claims;
}

/** A claim as a source list quotes it: no vote tag or outer quotes, ~160 chars. A comparison
 * row is not a sentence: its sources say where they were counted (``quoted: false``). */
export function quoteOf(claim) {
  let text = tidied(claim).replace(/\s+/g, " ");
  while (TRAILING_VOTES.test(text)) text = text.replace(TRAILING_VOTES, "");
  text = text.replace(QUOTES, "");
  if (text.length <= QUOTE_CHARS) return text;
  const cut = text.slice(0, QUOTE_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > QUOTE_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, "")}…`;
}

/** How the synthesis explains a minority-report pick; the page shows the votes instead. */
const DISSENT_NOTE = /\s*\(Upvoted at or above its thread's median\b[\s\S]*\)\s*$/i;

/**
 * What an answer's sections show, each sentence once in reading order (summary, highlights,
 * cautions, hidden gems, minority report, pivot alerts, comparison cells): an item with
 * nothing new is left out, a cell with nothing new is empty. The summary, highlights and
 * cautions are cited texts (``spansOf``), the one summary the answer's own (``summary.claims``);
 * ``claims`` are every claim in that order with what it cites, left-out items included (their
 * sentence is shown above), so each of their sources still has the sentence it supports.
 */
export function shownAnswer(summary, synthesis) {
  const texts = (summary && summary.claims) || {};
  const text = spansOf(texts.summary || []);
  const shown = new Shown();
  shown.add(text);
  const claims = citedClaims(text);
  const cited = (items) => (items || []).flatMap((item) => {
    const spans = spansOf(item);
    const kept = shown.keep(spans);
    claims.push(...citedClaims(kept ?? spans));
    return kept === null ? [] : [kept];
  });
  const linked = (items) => (items || []).flatMap((item) => {
    const full = String(item.text ?? "").replace(DISSENT_NOTE, "");
    const kept = shown.keepText(full);
    claims.push({ text: tidied(kept ?? full), refs: [...(item.sources || [])] });
    return kept === null ? [] : [{ ...item, text: kept }];
  });
  const highlights = cited(texts.highlights);
  const cautions = cited(texts.cautions);
  const gems = linked(synthesis && synthesis.hidden_gems);
  const minority = linked(synthesis && synthesis.minority_report);
  const pivots = linked(synthesis && synthesis.pivot_alerts);
  const table = ((synthesis && synthesis.comparison_table) || []).map((row) => {
    const cells = (items) => (items || []).map((c) => shown.keepText(c)).filter((c) => c !== null);
    claims.push({ text: `counted for “${String(row.option)}” in the comparison`,
      refs: [...(row.sources || [])], quoted: false });
    return { ...row, pros: cells(row.pros), cons: cells(row.cons) };
  });
  return { text, highlights, cautions, gems, minority, pivots, table, claims };
}
