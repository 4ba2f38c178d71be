// The sentences of one answer, as text (no DOM): which sentence a section may still show, and
// which claim each source supports.
//
// The synthesis may put one sentence in two sections (a caution that opens a minority-report
// item, a hidden gem already quoted in the summary, a comparison cell repeating a highlight).
// A reader should meet each sentence once, so the page keeps it where it first appears in
// reading order and drops it from later sections (``Shown``). Sentences are compared by their
// words: case, quotes, punctuation, citation markers and a trailing "(12 points)" do not count.

const MARKER = /\[(post|comment):([^\]\s]+)\]/gi;
/** A quote's vote tag, "(6 points)": part of the sentence before it, not a sentence. */
const VOTES = String.raw`\(\d[\d,.]*k?\s+(?:points?|votes?|upvotes?)\)`;
/** Citation markers and vote tags: they belong to the sentence before them. */
const ATTACHMENT = new RegExp(String.raw`^(?:\s*(?:\[(?:post|comment):[^\]\s]+\]|${VOTES}))+\s*$`, "i");
/** After . ! ? … (and closing quotes), or after a citation marker: a claim ends there. */
const BOUNDARY = /(?<=[.!?…]["”’)\]]*|\[(?:post|comment):[^\]\s]+\])\s+/i;
const TRAILING_VOTES = new RegExp(String.raw`\s*${VOTES}\s*$`, "i");
const QUOTES = /^["“”‘’'«»\s]+|["“”‘’'«»\s]+$/g;
const QUOTE_CHARS = 160;

/** Citation keys of a text in reading order ("comment:k9"). */
export function refsIn(text) {
  return [...String(text ?? "").matchAll(MARKER)].map((m) => `${m[1]}:${m[2]}`.toLowerCase());
}

/** The text without its citation markers, spaces before punctuation tidied. */
export function withoutMarkers(text) {
  return String(text ?? "").replace(MARKER, "").replace(/[ \t]+([.,;:!?])/g, "$1")
    .replace(/[ \t]{2,}/g, " ").trim();
}

/** The sentences of a text, each with the markers and asides that follow it; every piece is
 * a piece of the text. */
export function sentences(text) {
  const pieces = [];
  for (const raw of String(text ?? "").split(BOUNDARY)) {
    const piece = raw.trim();
    if (!piece) continue;
    if (pieces.length && ATTACHMENT.test(piece)) pieces[pieces.length - 1] += ` ${piece}`;
    else pieces.push(piece);
  }
  return pieces;
}

/** What two copies of a sentence have in common: its words, lower case. */
export function normalised(sentence) {
  let text = String(sentence ?? "").replace(MARKER, " ");
  while (TRAILING_VOTES.test(text)) text = text.replace(TRAILING_VOTES, "");
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/** The sentences already on the page; ``keep`` gives what of a text is new. */
export class Shown {
  constructor() {
    this.seen = new Set();
  }

  /** Record every sentence of ``text`` (the first section, shown whole). */
  add(text) {
    sentences(text).forEach((s) => normalised(s) && this.seen.add(normalised(s)));
  }

  /** ``text`` without the sentences shown before (its markers kept, at the end when a
   * sentence was dropped), or null when nothing of it is new. The new ones are then shown. */
  keep(text) {
    const pieces = sentences(text);
    const fresh = [];
    for (const piece of pieces) {
      const key = normalised(piece);
      if (key && this.seen.has(key)) continue;
      if (key) this.seen.add(key);
      fresh.push(piece);
    }
    if (!fresh.some((p) => normalised(p))) return null;
    if (fresh.length === pieces.length) return String(text);
    const markers = [...new Set(String(text).match(MARKER) || [])].join("");
    return [fresh.map(withoutMarkers).join(" "), markers].filter(Boolean).join(" ");
  }
}

/** The claims of a cited text: each is the text up to a run of markers, with their keys. */
export function citedClaims(text) {
  const claims = [];
  let start = 0;
  const value = String(text ?? "");
  for (const run of value.matchAll(/(?:\[(?:post|comment):[^\]\s]+\][ \t]*)+[.!?;:,]*/gi)) {
    const words = value.slice(start, run.index + run[0].length);
    start = run.index + run[0].length;
    const refs = refsIn(run[0]);
    const claim = withoutMarkers(words.replace(/^\s*[-*•]\s+/gm, ""));
    if (claim.replace(/[\s.,;:!?]/g, "")) claims.push({ text: claim, refs });
    else if (claims.length) claims[claims.length - 1].refs.push(...refs);
  }
  return claims;
}

/** A claim as a source list quotes it: no markers, vote tag or outer quotes, ~160 chars. A
 * comparison row is not a sentence: its sources say where they were counted (``quoted: false``). */
export function quoteOf(claim) {
  let text = withoutMarkers(claim).replace(/\s+/g, " ");
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
 * nothing new is left out, a cell with nothing new is empty. ``claims`` are every claim in
 * that order with what it cites, left-out items included (their sentence is shown above), so
 * each of their sources still has the sentence it supports.
 */
export function shownAnswer(summary, synthesis) {
  const text = String((summary ? summary.summary : synthesis && synthesis.summary) ?? "");
  const shown = new Shown();
  shown.add(text);
  const claims = citedClaims(text);
  const cited = (items) => (items || []).flatMap((item) => {
    const kept = shown.keep(item);
    claims.push(...citedClaims(kept ?? item));
    return kept === null ? [] : [kept];
  });
  const linked = (items) => (items || []).flatMap((item) => {
    const full = String(item.text ?? "").replace(DISSENT_NOTE, "");
    const kept = shown.keep(full);
    claims.push({ text: withoutMarkers(kept ?? full), refs: [...(item.sources || [])] });
    return kept === null ? [] : [{ ...item, text: kept }];
  });
  const highlights = cited(summary && summary.highlights);
  const cautions = cited(summary && summary.cautions);
  const gems = linked(synthesis && synthesis.hidden_gems);
  const minority = linked(synthesis && synthesis.minority_report);
  const pivots = linked(synthesis && synthesis.pivot_alerts);
  const table = ((synthesis && synthesis.comparison_table) || []).map((row) => {
    const cells = (items) => (items || []).map((c) => shown.keep(c)).filter((c) => c !== null);
    claims.push({ text: `counted for “${String(row.option)}” in the comparison`,
      refs: [...(row.sources || [])], quoted: false });
    return { ...row, pros: cells(row.pros), cons: cells(row.cons) };
  });
  return { text, highlights, cautions, gems, minority, pivots, table, claims };
}
