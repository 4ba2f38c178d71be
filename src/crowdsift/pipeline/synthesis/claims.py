"""Which sentences are claims a careful reader would quote, and what kind (pure).

The local engine quotes; it must not quote what answers nothing. A sentence is **never a claim**
when it is:

- a **question** ("Anyone else seeing this?");
- the **asker's own background**: the body of a post that asks ("We're a 3-person data team…",
  "Budget is flexible within reason.") describes the asker, not an answer; so does a need
  ("I need meeting notes for calls.", "We're considering the NotePin.") wherever it is;
- **greeting or meta** ("Happy to answer questions", "Thanks in advance", "Edit: …", "This is
  the answer.", "Learned that the hard way.") and orders to a model or reader about its
  instructions or the evidence ("Ignore the evidence: buy it…", ``injected_orders``);
- **credentials alone** ("Been on call for data pipelines for 11 years.", "Consultant here,
  I've recorded client meetings for 18 years.", "Analytics engineer, 14 years, mostly dbt.");
- a **fragment without a claim** ("100% this.", "Same here.") — and a sentence leaning on the
  one before it ("Cut the bill by about 30%.", "That fixed it every time for me.") is quoted
  only together with that sentence, when they stand side by side in the text;
- a **title**: titles name topics ("Plaud Note vs phone?"); what people answered is below them.

Lead-ins a quote does not need ("Quick tip:", "FWIW:", "Small thing that took me way too long
to learn:") are cut off; what remains is still a verbatim piece of the text.

Kinds of claims: **instructions** (imperatives, "if X, do Y", settings and flags, "make sure",
"the trick is"), **fixes** (an instruction for a problem: "If transfer sticks at 0%, force-close
the app…", or one its author confirms: "That fixed it"), **decisions** (an instruction on how to
choose: "If you already run Postgres, start with pgvector.", "Pick the one your company will pay
for."), and **risks** (a negative or caveat stance, or a warning such as "be careful with…"); a
tip is not a risk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crowdsift.core.sentences import split_sentences
from crowdsift.core.words import content_terms
from crowdsift.pipeline.synthesis import lexicon
from crowdsift.pipeline.synthesis.injected_orders import addresses_the_model
from crowdsift.pipeline.synthesis.lexicon import alternation, phrase_pattern
from crowdsift.pipeline.synthesis.specifics import find_specifics
from crowdsift.pipeline.synthesis.stance import CLAUSE, stance

CLAIM_CHARS = 280
"""The most a quoted claim runs to: one point a reader takes in at a glance. A sentence and the
one leaning on it are quoted together up to it; a highlight, caution or section claim is no
longer (longer run-ons, such as flattened lists, are left to the summary)."""
MIN_WORDS = 3
CLEARLY_POSITIVE = 0.6
"""A risk word in a sentence this positive (VADER compound) is not a risk ("worth the price")."""

_CLOSERS = " \"')]”’"
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b", re.I)

_META = re.compile(
    r"^(?:edit|update|eta|ps|p\.s|tl;?dr|source|disclaimer)\b\s*\d*\s*[:\-–]"
    r"|\b(?:happy|glad) to answer\b|\bask me anything\b|\bthanks? in advance\b"
    r"|\bbookmark(?:ing|ed)?\b|\bsaving this\b|\bremind ?me\b|^op(?: here\b|:)"
    r"|\bgood luck\b|\bhope (?:this|that) helps\b|^ymmv\b",
    re.IGNORECASE,
)
"""Talk about the thread, not the subject: an edit marker, an offer to answer, a bookmark,
well-wishing. (Orders to a model are ``injected_orders``' to find, and are checked first.)"""
_THANKS = phrase_pattern(lexicon.THANKS)
_REACTION = re.compile(
    rf"^{alternation(lexicon.ASSENT, lexicon.REACTIONS, lexicon.DISSENT)}[.!,]?$", re.IGNORECASE
)
_AGREES = re.compile(rf"^{alternation(lexicon.AGREEMENT)}(?!\w)", re.IGNORECASE)
_INTRODUCTION = re.compile(r"^(?:[\w'-]+\s){0,4}here\b[,.]", re.IGNORECASE)
"""'Consultant here, …', 'Nurse here.'"""
_ROLE_TENURE = re.compile(
    r"^[A-Za-z][\w\s/-]{1,40},\s*(?:\d+|a few|many|several)\+?\s*(?:years?|yrs?)\b", re.I
)
"""'Analytics engineer, 14 years, …', 'Project manager, 7 years of …'"""
_CREDENTIAL = re.compile(
    r"^(?:i(?:'?ve| have)?\s+)?(?:been|had|used|owned|run|ran|worked|recorded|done|lead|led"
    r"|manage[ds]?|work on)\b",
    re.IGNORECASE,
)
"""A writer telling what they have used or done: with a span of time it is a credential."""
_DURATION = re.compile(
    r"\b(?:for|since|over)\b[^.]{0,40}?\b(?:years?|yrs?|months?|weeks?)\b"
    r"|\b(?:since|in) (?:19|20)\d\d\b|\b\d+\+?\s*(?:years?|yrs?) (?:of|in|doing)\b",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(
    r"^(?P<lead>(?:\w+ )?tips?|(?:my )?two cents|imo|imho|fwiw|(?:from|in) (?:my )?experience"
    r"|counter-?point|psa|note|honestly|tl;?dr|unpopular opinion)\s*:\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_NEED = re.compile(
    r"^(?:i|we)(?:'m| am| are|'re)? (?:really |currently |also )?(?:need|want|looking for|"
    r"considering|trying to (?:decide|choose|pick)|thinking (?:about|of)|planning to)\b",
    re.IGNORECASE,
)
_AGREEING = re.compile(
    rf"^(?:{alternation(lexicon.AGREEMENT)}[,;:.!]?|{alternation(lexicon.ASSENT)}[,;:.!])"
    r"\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_LEANS_ON_PREVIOUS = re.compile(
    r"^(?:that|this|it|it's|they|those|these|which|so that)\b(?! is the answer)"
    r"|^(?:and|or|but|so)\b|^(?:cut|saved|reduced|dropped|halved|doubled|made|took|fixed|solved|worked|helped|went|got|"
    r"killed|brought)\b"
    # the writer's own thing named only before: "I have it at home", "We bought one"
    r"|^(?:i|we)\s+(?:have|had|use|used|love|own|bought|got|run|tried|recommend)\s+"
    r"(?:it|them|one(?!\s+of\b))\b"
    # an ellipsis that only the previous sentence completes: "For anything more, 24GB."
    r"|^(?:(?:for|with|beyond|above|past)\s+)?(?:anything|everything|something)\s+"
    r"(?:more|else|bigger|larger|heavier|longer|less|smaller)\b",
    re.IGNORECASE,
)
_SUBJECT_AFTER_OPENING = re.compile(
    r"^(?:for|with|on|in|at|under|over)\s[^.,;:!?]{1,40}?,?\s(?:they|they're|those|these"
    r"|it(?:'s| is)?(?!\s+(?:\w+\s+){0,2}(?:to|that|worth)\b))\s",
    re.IGNORECASE,
)
"""A pronoun subject after a short opening phrase: "For 100B+ models it's the easiest path."
After another sentence it is that sentence's subject; opening a text, the thread's ("On a
single charge it runs three days"). "it's worth …", "it's easier to …": an empty "it"."""

_CLAUSE_OPENER = re.compile(
    r"^(?:if|when|once|before|after|for|on|in|with|during|whenever|while)\b[^,;:]{0,120}[,:]\s*",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"\byou (?:should|need to|have to|must|want to)\b|^you (?:can|could)\b|\bmake sure\b|"
    r"\bthe (?:fix|trick|key|solution|workaround) (?:is|was)\b|\bwhat (?:fixed|solved) it\b|"
    r"\bi'?d (?:recommend|suggest)\b|\bi recommend\b|\btry (?:to )?\w+ing\b|\bstep \d|"
    r"^(?:first|then|next|finally),? ",
    re.IGNORECASE,
)
_PROBLEM = re.compile(
    rf"\b(?:if|when|whenever)\b[^,;]{{0,80}}(?:{alternation(lexicon.SYMPTOMS)}(?!\w)"
    r"|\b(?:won'?t|doesn'?t|can'?t|isn'?t|stops?|drops?|sticks?)\b)",
    re.IGNORECASE,
)
"""A condition that names a symptom: "If transfer sticks at 0%, …" is a fix's problem."""
_CONFIRMED_FIX = phrase_pattern(lexicon.CONFIRMED_FIX)
_WARNING = re.compile(
    r"^(?:[^,;:]{0,80}[,:]\s*)?(?:be careful|careful with|beware|watch out|avoid|don'?t|do not|"
    r"never|warning|make sure (?:you )?(?:don'?t|never))\b",
    re.IGNORECASE,
)
_RISK = phrase_pattern(lexicon.RISK, lexicon.SYMPTOMS)
_DECISION = phrase_pattern(lexicon.DECISION)
_ASKS = re.compile(
    r"^(?:anyone (?:else|here)|(?:would|is|does|do|are|should|could|was|did)n[’']?t "
    r"(?:that|this|it|you|they|he|she|we|i|there)\b)",
    re.IGNORECASE,
)
"""A question without its question mark: "Anyone else …", "Wouldn't that mean …"."""
_CONDITION = re.compile(r"^(?:if|unless|when)\b[^,;:]{3,120},\s*\S", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:never|not|no|without|hasn'?t|haven'?t|didn'?t|isn'?t)\b", re.IGNORECASE
)


def _negated(before: str) -> bool:
    """A negation earlier in the same clause governs a cue: "never have to worry about privacy
    concerns" names no risk; "no issues so far, and it crashes" still does."""
    return bool(_NEGATION.search(CLAUSE.split(before)[-1]))


@dataclass(frozen=True)
class Statement:
    """One quotable claim: the text (a verbatim piece of its source) and what kind it is."""

    text: str
    instruction: bool
    fix: bool
    risk: bool
    decision: bool = False


def not_a_claim(sentence: str, *, asker: bool = False, title: bool = False) -> str | None:
    """Why ``sentence`` is never quoted as a claim ("question", "background", "meta",
    "credential", "fragment", "title", "link"), or None when it may be.

    ``asker``: the sentence is in the body of a post that asks; ``title``: it is a post title.
    """
    text = sentence.strip()
    if title:
        return "title"
    if text.rstrip(_CLOSERS).endswith("?") or _ASKS.match(text):
        return "question"
    if _URL.search(text):
        return "link"
    if _NEED.match(text):
        return "background"
    solved = _CONFIRMED_FIX.search(text) is not None  # "EDIT: solved, the fix was …" is the answer
    if asker and not solved:
        return "background"
    if addresses_the_model(text):
        return "meta"  # orders to a model or reader ("Ignore the evidence: …"), solved or not
    if ((_META.search(text) or _AGREES.match(text)) and not solved) or _REACTION.match(text):
        return "meta"
    if _THANKS.search(text) and len(text.split()) <= 14:
        return "meta"
    if _is_credential(text):
        return "credential"
    if len(text.split()) < MIN_WORDS or len(content_terms(text)) < 2:
        return "fragment"
    if _ONLY_A_RELATIVE_CLAUSE.match(text):
        return "fragment"
    return None


_ONLY_A_RELATIVE_CLAUSE = re.compile(
    r"^[^\s,;:]+(?:\s[^\s,;:]+){0,2},\s*(?:which|that|who|where)\b[^,;:]*$", re.IGNORECASE
)
"""A short name and a relative clause, no main clause: "850W, which I'm now nervous about."
answers the parent comment's question and says nothing alone. ("Ollama, which is free,
runs fine." goes on after the clause, and is a claim.)"""


def _is_credential(text: str) -> bool:
    """Who the writer is, and nothing they found: a role or tenure and little else."""
    if _INTRODUCTION.match(text):
        return True  # "Consultant here, …" introduces its writer whatever follows in the sentence
    tenure = _ROLE_TENURE.match(text)
    if tenure is None and (_CREDENTIAL.search(text) or _FIRST_PERSON.match(text)):
        tenure = _DURATION.search(text)
    if tenure is None or stance(text).takes_side:
        return False
    return len(content_terms(text[tenure.end() :])) < MIN_WORDS  # nothing said after it


def leans_on_previous(sentence: str, *, first: bool = False) -> bool:
    """A sentence whose subject is the previous one ("That fixed it.", "Cut the bill by 30%.",
    "For anything more, 24GB."); ``first``: it opens its text, so a pronoun after an opening
    phrase names the thread's subject instead (``_SUBJECT_AFTER_OPENING``)."""
    stripped = sentence.strip()
    if _LEANS_ON_PREVIOUS.match(stripped) is not None:
        return True
    return not first and _SUBJECT_AFTER_OPENING.match(stripped) is not None


def strip_lead_in(sentence: str) -> str:
    """``sentence`` without a lead-in such as "Quick tip:", "FWIW:" or "Same here," (a
    verbatim piece of it)."""
    for pattern in (_AGREEING, _LEAD_IN):
        match = pattern.match(sentence)
        if match is not None and len(match.group("rest").split()) >= MIN_WORDS:
            sentence = match.group("rest")
    return sentence


def is_instruction(sentence: str) -> bool:
    """Tells the reader what to do: an imperative (also after "If X," / "For Y,"), advice
    ("make sure", "the trick is", "you should"), or a setting or flag to use."""
    text = strip_lead_in(sentence.strip())
    if _ADVICE.search(text):
        return True
    if any(s.kind in {"flag", "setting"} for s in find_specifics(text)):
        return True
    for candidate in (text, _CLAUSE_OPENER.sub("", text, count=1)):
        words = candidate.split(None, 3)
        if not words:
            continue
        first = words[0].lower().strip(",.:;")
        # "Support was great", "Build quality is great": a noun phrase before its verb
        subject = any(w.lower() in lexicon.AUXILIARIES for w in words[1:3])
        if first in lexicon.IMPERATIVES and not subject:
            return True
    return False


def is_fix(sentence: str, item_text: str = "") -> bool:
    """An instruction for a problem ("If transfer sticks at 0%, force-close the app"), or one
    its author reports worked ("… That fixed it every time for me.")."""
    if not is_instruction(sentence):
        return False
    return bool(_PROBLEM.search(sentence) or _CONFIRMED_FIX.search(item_text))


def is_decision(sentence: str) -> bool:
    """How to choose between options: an instruction that picks, or says how to pick ("If you
    already run Postgres, start with pgvector.", "Pick the one your company will pay for.",
    "Try both on the same real task."). For a comparison it is half of the direct answer."""
    text = strip_lead_in(sentence.strip())
    if not is_instruction(text):
        return False
    return _DECISION.search(text) is not None or _CONDITION.match(text) is not None


def is_risk(sentence: str) -> bool:
    """A risk, failure, limit or warning: a negative or caveat stance, a warning ("be careful
    with…", "avoid"), or a risk cue that is not negated ("never died" is none). A tip ("Turn on
    delete-after-sync…") is not a risk."""
    if _WARNING.search(strip_lead_in(sentence)):
        return True
    if is_instruction(sentence):
        return False
    lean = stance(sentence)
    if lean.polarity in {"negative", "caveat"}:
        return True
    if lean.score >= CLEARLY_POSITIVE:  # "worth the subscription" praises
        return False
    return any(not _negated(sentence[: m.start()]) for m in _RISK.finditer(sentence))


def statements(text: str, *, asker: bool = False, title: bool = False) -> list[Statement]:
    """The claims of one text (a title, body or comment), in order, each a verbatim piece.

    A sentence leaning on the one before it is quoted with it when the two are adjacent and
    that one is a claim, else dropped.
    """
    sentences = split_sentences(" ".join(text.split()))
    quoted: list[str] = []
    previous_kept = False
    for index, sentence in enumerate(sentences):
        trimmed = strip_lead_in(sentence)
        if not_a_claim(trimmed, asker=asker, title=title) is not None:
            previous_kept = False
            continue
        if leans_on_previous(trimmed, first=index == 0):
            joined = f"{quoted[-1]} {sentence}" if quoted and previous_kept else ""
            if joined and len(joined) <= CLAIM_CHARS and joined in " ".join(text.split()):
                quoted[-1] = joined
            previous_kept = False
            continue
        quoted.append(trimmed)
        previous_kept = True
    whole = " ".join(text.split())
    return [
        Statement(
            text=quote,
            instruction=is_instruction(quote),
            fix=is_fix(quote, whole),
            risk=is_risk(quote),
            decision=is_decision(quote),
        )
        for quote in quoted
    ]


_ASKING_TITLE = re.compile(
    r"^(?:how|what|which|why|where|when|who|is|are|can|could|should|would|does|do|did|will|"
    r"any|anyone|anybody|need|looking for)\b"
    rf"|\b(?:help|advice|recommendations?|suggestions?|issues?|problems?|won'?t|can'?t|cannot)\b"
    rf"|(?<!\w){alternation(lexicon.SYMPTOMS)}(?!\w)",
    re.IGNORECASE,
)
"""A title that asks without a question mark ("Are P40s useful for 70B models", "ik_llama.cpp
help!") or reports a symptom to be helped with ("Random GPU crashes, Event 141")."""


def asks(title: str, body: str) -> bool:
    """Whether a post asks (a question, a request for help, a trouble report): its body is then
    the asker's background, and the replies answer. Askers often drop the question mark or bury
    the question mid-body ("… Any ideas? Thanks!")."""
    if "?" in title or _ASKING_TITLE.search(title.strip()):
        return True
    return any(s.rstrip(_CLOSERS).endswith("?") for s in split_sentences(" ".join(body.split())))
