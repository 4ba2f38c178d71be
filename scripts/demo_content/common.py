# ruff: noqa: E501
"""Pools every theme shares: how people agree, push back, thank, and say almost nothing."""

from __future__ import annotations

AGREE = (
    "Same here.",
    "Can confirm.",
    "This is the answer.",
    "+1 to this.",
    "Exactly my experience.",
    "Seconding this.",
    "Yep.",
    "100% this.",
    "Came here to say this.",
    "This matches what I've seen.",
)

DISAGREE = (
    "Hard disagree.",
    "That hasn't been my experience at all.",
    "Counterpoint:",
    "I'd push back on this a bit.",
    "Respectfully, no.",
    "Eh, it depends.",
    "I used to think that too.",
    "Not sure I agree.",
)

ANSWER = (
    "Not OP, but:",
    "In my case:",
    "From what I've seen:",
    "Short answer:",
    "Good question.",
    "",
)

THANKS = (
    "Thanks, this is exactly what I needed.",
    "Huh, never thought of that. Trying it this weekend.",
    "Saving this.",
    "Great write-up, thanks for taking the time.",
    "This should be pinned.",
    "Wish I'd read this a month ago.",
    "Ok that makes a lot of sense, thank you.",
    "Appreciate the detail, this is really helpful.",
    "Bookmarking this thread.",
    "This is the kind of answer I come to this sub for.",
    "Exactly the info I was looking for, thanks.",
    "Good call, I'll try that first.",
    "Didn't know that, thanks!",
    "Super helpful, thank you for the specifics.",
)

OP_REPLIES = (
    "OP here. That's basically where I'm leaning, thanks.",
    "Update: went with this and it worked. Thanks everyone.",
    "OP: good point, I hadn't considered that at all.",
    "Thanks! Follow-up: would you do the same thing on a tighter budget?",
    "Update for anyone finding this later: followed the top comment and it's been fine for two months.",
    "OP here. Tried it yesterday, night and day difference.",
    "OP: this is the most useful reply so far, thank you.",
    "Fair. I think I was overthinking it.",
    "OP here. Did exactly this over the weekend. Wish I'd asked sooner.",
    "Thanks, ordered it. Will report back.",
    "That's the part I was missing. Appreciate it.",
    "OP: makes sense. Marking this as solved.",
    "Okay, you've convinced me.",
    "Good to know, I was about to do the opposite.",
)

OP_OPENERS = (
    "Thanks!",
    "OP here, thanks.",
    "Helpful, thank you.",
    "Appreciate it.",
    "Interesting.",
)

HEDGES = (
    "IMO:",
    "Honestly?",
    "From experience:",
    "FWIW:",
    "Two cents:",
    "Quick tip:",
    "Short version:",
)

TAILS = (
    "YMMV.",
    "Worked for me at least.",
    "Learned that the hard way.",
    "Not an expert, just what worked for me.",
    "Hope that helps.",
    "Just my experience.",
    "Good luck!",
    "Took me way too long to figure that out.",
)

SHORT = (
    "This.",
    "Following",
    "lol",
    "+1",
    "Same",
    "?",
    "Nice",
    "Bump",
    "ty",
    "Saved",
)

EMOJI = ("😂", "👍", "🔥", "🙏", "🤷‍♂️", "👀", "💯", "🫠", "🎉", "😅")

ASIDES = (
    "Not in a hurry, I'd rather do it right.",
    "I searched the sub, but most threads I found are a couple of years old.",
    "Budget is flexible within reason.",
    "Happy to answer questions if I left something out.",
    "I know this gets asked a lot, sorry.",
    "Long-time lurker, first post.",
    "",
    "",
)

EDITS = (
    "Edit: thanks all, lots of great answers here.",
    "Edit: to clarify, this is for personal use, not work.",
    "EDIT: wow, did not expect this many replies. Reading all of them.",
    "Edit 2: decided, going with the advice in the top comment.",
)

LINK_COMMENT_OPENERS = (
    "Read the whole thing. Key point for me:",
    "Nice to see this covered.",
    "Good article, though it glosses over one thing.",
    "Finally.",
)

GEM_OPENERS = (
    "",
    "Late to this, but one thing that made a big difference for me:",
    "Buried tip since nobody mentioned it:",
    "Small thing that took me way too long to learn:",
    "Adding this because it's not in any of the guides:",
)

DISSENT_REPLIES = (
    "This deserves to be higher.",
    "Finally someone says it. Same experience here.",
    "Good counterpoint, and I say that as someone who disagrees.",
    "The numbers are the useful part. Thanks for actually measuring.",
)

ADJECTIVES = (
    "quiet",
    "lazy",
    "old",
    "grumpy",
    "weekend",
    "midnight",
    "rusty",
    "honest",
    "tired",
    "curious",
    "salty",
    "chill",
    "northern",
    "coastal",
    "retired",
    "accidental",
    "hungry",
    "sleepy",
    "feral",
)

NOUNS = (
    "dad",
    "nerd",
    "wizard",
    "goblin",
    "otter",
    "pilot",
    "gremlin",
    "monk",
    "raccoon",
    "ghost",
    "whisperer",
    "enjoyer",
    "guy",
    "lady",
    "tinkerer",
    "hermit",
    "penguin",
    "badger",
)
