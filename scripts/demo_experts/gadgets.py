# ruff: noqa: E501
"""Desk Gear Weekly: a fictional productivity-gadgets reviewer's channel (English).

Sample text written for the demo. Battery hours, prices, plan minutes and weights are
invented round numbers, not product specifications; "Memoa One" and "Voxa Clip" are made-up
products (as in the Reddit demo). The author signs posts "Priya" but comments from a personal
account named "Priya Raman", so the importer needs her user id (the manifest gives it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from demo_experts.model import Channel, Post, Reply

E = "expert"

POSTS = (
    Post(
        "intro",
        "This is **Desk Gear Weekly**: one gadget or tool a week, used for real work before I write a word. I buy most of what I review; loaners are marked. #deskgear",
        filler=1,
    ),
    Post(
        "usb_c_hub",
        "USB-C hubs: buy one with its own power input if you run two monitors. The bus-powered ones brown out when the laptop is busy, and your external drive disconnects mid-copy.",
    ),
    Post(
        "plaud_first_look",
        "First look: **Plaud Note**. A credit-card-sized AI voice recorder that sticks to the back of your phone with a magnet. One switch records a meeting; a mode switch records phone calls through a vibration sensor. Transcripts and summaries live in the Plaud app. Full review after a month of meetings.",
        thread=(
            Reply("How much is it and is there a subscription?", who="Sam Whitfield"),
            Reply(
                "About $159. There is a free monthly allowance of transcription minutes and paid plans for more. I will do the subscription math in the review.",
                who=E,
                to=0,
            ),
            Reply("Does the magnet mess with MagSafe wallets?", who="Kofi A."),
            Reply(
                "It uses its own magnetic ring, so you pick: the recorder or the wallet on the back.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "plaud_review",
        "**Plaud Note review, one month in.** What it does better than my phone: it is always charged, always in the same place and one switch away, so I recorded every meeting instead of the ones I remembered. Battery: roughly 30 hours of recording, I charged it once a week. Transcripts: as good as the phone apps in quiet rooms, better with two people talking over each other. Weak spots: the subscription if you record more than ~5 hours a month, and every recording goes to the cloud for transcription.",
        reply_to="plaud_first_look",
        thread=(
            Reply("So is it worth it over just using the phone's recorder app?", who="Megan L."),
            Reply(
                "If you are in back-to-back in-person meetings: yes, the friction difference is real. If most of your meetings are video calls: no, the built-in transcription of your call app covers it.",
                who=E,
                to=0,
            ),
            Reply(
                "Call recording through the case, does the other side hear a beep?",
                who="Sam Whitfield",
            ),
            Reply(
                "No beep, which is exactly why you must tell people you are recording. Consent laws apply to the device just like to an app.",
                who=E,
                to=2,
            ),
            Reply(
                "The subscription kills it for me. Whisper on my laptop is free", who="tinkerer_jo"
            ),
            Reply(
                "Fair, and you can export the audio and do exactly that. You lose the one-tap summary.",
                who=E,
                to=4,
            ),
        ),
    ),
    Post(
        "desk_mic",
        "A USB desk mic for calls is the best $60 upgrade for remote work. People stop asking you to repeat yourself, and recorded calls transcribe with fewer mistakes.",
    ),
    Post(
        "phone_apps",
        "The free alternative, tested: recording meetings on the phone. **Pixel Recorder** transcribes on-device with speaker labels, for free. The **iPhone** now records and transcribes calls natively. Otter joins your video calls. For many people this is enough, and nothing leaves the phone with the on-device options.",
        thread=(
            Reply("On-device transcription quality vs Plaud?", who="Kofi A."),
            Reply(
                "In quiet rooms, close. With crosstalk and accents the Plaud's cloud model did noticeably better in my tests.",
                who=E,
                to=0,
            ),
            Reply("Pixel Recorder is honestly the reason I stayed on Pixel", who="Megan L."),
        ),
    ),
    Post(
        "recorder_comparison",
        "Comparison time: **Plaud Note vs Memoa One vs Voxa Clip**. Plaud: the most polished app and best English transcripts with jargon. Memoa One: $99, more transcription languages, clunky app. Voxa Clip: clips to your shirt, but about 9 hours of battery, one long workday. My pick for meetings: Plaud. On a budget: Memoa.",
        thread=(
            Reply("Any of them without a subscription at all?", who="Daniel Brooks"),
            Reply(
                "None of the AI ones are fully subscription-free if you want cloud transcription. A basic voice recorder plus Whisper on a laptop is the no-subscription route.",
                who=E,
                to=0,
            ),
            Reply("Export formats? I want plain text and the audio", who="tinkerer_jo"),
            Reply(
                "Plaud and Memoa export TXT and the audio. Voxa exports audio only unless you pay.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "otter_vs_plaud",
        "Otter vs Plaud, since they get compared a lot: Otter is software that joins your video calls; the Plaud is hardware for the room and the phone call. Remote-first people need Otter or their call app's notes. Office-and-phone people need a recorder.",
        thread=(
            Reply("Can Otter do in-person meetings from the phone?", who="Kofi A."),
            Reply(
                "Yes, the phone app records the room. Then it is the same trade-off as any phone recording: the phone has to stay free and charged.",
                who=E,
                to=0,
            ),
        ),
    ),
    Post(
        "privacy_note",
        "A note on privacy, since half of your questions are about it: AI voice recorders upload audio to a cloud for transcription. Read the data retention policy, check where servers are, and ask your employer before recording work meetings. If that is a deal-breaker, use on-device transcription on the phone.",
    ),
    Post(
        "monitor_arm",
        "Desk setup: moved my monitor arm from a desk clamp to the wall. Wall mount means finding a stud (or using proper anchors in concrete), a level, and a drill. The clamp was fine; the wall mount freed 15 cm of desk depth and stopped the wobble when I type.",
        thread=(
            Reply("What anchors for drywall without a stud?", who="Megan L."),
            Reply(
                "For a monitor arm, do not rely on drywall anchors alone. Find a stud, or use a mounting plate that spans two studs. Toggle bolts only for light loads.",
                who=E,
                to=0,
            ),
            Reply("Which drill did you use?", who="Sam Whitfield"),
            Reply(
                "An 18V drill/driver for the pilot holes and an impact driver for the lag screws. A brick wall would need a hammer drill.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "drill_for_renters",
        'Reader question: "I rent and own zero tools, what do I buy for shelves and monitor mounts?" A 12V or 18V **drill/driver**, a bit set, a stud finder and a level. Skip the impact driver until you drive big screws often. If your walls are concrete, add a **hammer drill**: a normal drill will just burn bits.',
        thread=(
            Reply("DeWalt vs Milwaukee vs Ryobi for a beginner?", who="Kofi A."),
            Reply(
                "For a few shelves a year, the cheapest reputable platform is fine. Buy into the battery system you are most likely to expand, because batteries are the expensive part.",
                who=E,
                to=0,
            ),
            Reply("Also get a cheap laser level, game changer for shelves", who="Daniel Brooks"),
        ),
    ),
    Post(
        "noise_cancelling",
        "Noise-cancelling headphones for open offices: over-ear beat earbuds for long days, and a boom or beamforming mic matters more for calls than the ANC rating. Try them on for an hour before you keep them.",
    ),
    Post(
        "laptop_stand",
        "Laptop stand plus external keyboard is the cheapest ergonomic fix there is. Screen at eye level, wrists flat. Under $40, no tools needed.",
    ),
    Post(
        "standing_desk",
        "Standing desk, six months: dual-motor frames are quieter and more stable than single-motor ones. I stand about two hours a day, not eight. The anti-fatigue mat mattered more than the desk.",
    ),
    Post(
        "notepin",
        "**Plaud NotePin** hands-on: the wearable version. Clips to a collar or a lanyard, same app and transcripts as the Note. Better for walking meetings and site visits; worse for calls, since it has no vibration-sensor call mode. If you sit at a table most of the time, the Note is the better buy.",
        thread=(
            Reply("Battery on the pin?", who="Megan L."),
            Reply("Around 20 hours of recording in my use, less than the Note.", who=E, to=0),
            Reply("Wearing a recorder on my shirt all day feels creepy tbh", who="tinkerer_jo"),
            Reply(
                "It records only when you press it, but the worry is fair: make it visible and tell people.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "plaud_review_repost",
        forward_of="plaud_review",
    ),
    Post(
        "recording_tip",
        "Recording tip from a reader that works with every recorder and phone: put it on a folded microfiber cloth. It decouples the mic from table knocks and laptop typing, and the transcript gets fewer garbage words.",
        thread=(
            Reply("Tried it today, noticeably fewer [inaudible] bits", who="Megan L."),
            Reply("Love it when the cheapest tip is the best one.", who=E, to=0),
        ),
    ),
    Post(
        "keyboard",
        "Keyboard of the month: a low-profile mechanical with quiet switches. Typing is calmer in video calls, and the transcripts of my recorded meetings lost the clacking noise words. Small win.",
    ),
    Post(
        "summary_templates",
        "Getting more out of AI meeting summaries: pick a template per meeting type (1:1, sales call, lecture), fix names and jargon in the transcript before summarising, and paste action items into your task app the same day. A summary nobody reads is just a nicer transcript.",
        thread=(
            Reply("Does Plaud push action items to Todoist?", who="Daniel Brooks"),
            Reply(
                "Not directly, as far as I know. I copy them by hand, or export the text and use an automation.",
                who=E,
                to=0,
            ),
        ),
    ),
    Post(
        "e_ink_tablet",
        "E-ink tablet for meeting notes, three weeks: great for thinking on paper, bad at search. Handwriting recognition is fine for print, weak for my scrawl. It did not replace the recorder; it complements it.",
    ),
    Post(
        "ai_scripts_nondev",
        "Not a developer, but I used **Cursor** to write a small script that renames my meeting exports by date and title. It worked after three tries. LLM coding tools are now good enough for non-programmers to automate small chores, as long as you test on copies of your files.",
        thread=(
            Reply("Would ChatGPT alone have worked?", who="Sam Whitfield"),
            Reply(
                "Probably, with more copy-pasting. Cursor runs the script and fixes its own errors, which matters when you cannot read the code well.",
                who=E,
                to=0,
            ),
            Reply("Copilot free tier is also decent for this kind of thing", who="Kofi A."),
            Reply(
                "Please be careful with scripts that delete or move files, one of my first ones wiped a folder",
                who="tinkerer_jo",
            ),
            Reply("Exactly why I said copies. Always copies.", who=E, to=3),
        ),
    ),
    Post(
        "desk_photo",
        photo=True,
        thread=(
            Reply("Clean setup! What lamp is that?", who="Megan L."),
            Reply("A monitor light bar, review coming.", who=E, to=0),
        ),
    ),
    Post(
        "ergonomic_mouse",
        "Vertical mouse, one month: the wrist pain went away after two weeks, the accuracy came back after three. If your wrist hurts, try one; if it does not, you do not need it.",
    ),
    Post(
        "light_bar",
        "Monitor light bar review: lights the desk, not the screen, so no glare. The wireless dial is the best part. Worth it if your desk is in a dark corner, skip it if you have a good desk lamp.",
    ),
    Post(
        "forwarded_deal",
        "Reminder: most smart gadgets go on sale twice a year. If a product launched less than three months ago, wait; early units often get firmware fixes and price cuts.",
        forwarded_from="Smart Buyer Notes",
    ),
    Post(
        "plaud_six_months",
        "**Plaud Note, six months later.** Still on my phone every day. Firmware updates improved the transcripts of noisy rooms. The free minutes stopped being enough once I recorded every meeting, so I now export long meetings and transcribe them on my laptop. Would buy again for in-person meetings; would not for remote-only work. Earlier review: [here](post:plaud_review).",
        thread=(
            Reply(
                'So the phone vs Plaud answer is "depends on in person vs remote"?',
                who="Daniel Brooks",
            ),
            Reply(
                "Yes, that is the one-line version. In-person and phone calls: Plaud. Video calls: your call app's transcription. Quick memos: the phone.",
                who=E,
                to=0,
            ),
            Reply("What laptop transcription do you use?", who="tinkerer_jo"),
            Reply(
                "Whisper through a small desktop app. On a recent laptop an hour of audio takes about ten minutes.",
                who=E,
                to=2,
            ),
            Reply(
                "Off topic but which phone would you buy right now for the camera?",
                who="Sam Whitfield",
            ),
            Reply("Following, my iPhone 12 is dying", who="Kofi A.", to=4),
            Reply(
                "Pixel for photos of people, iPhone for video, that's been true for years",
                who="Megan L.",
                to=4,
            ),
            Reply(
                "Honestly any flagship from the last two years is fine, buy the one on sale",
                who="Daniel Brooks",
                to=6,
            ),
        ),
    ),
    Post(
        "smart_plug",
        "Smart plugs on the desk: monitor, speakers and lamp off at 7 pm automatically. Saves a few watts and, more importantly, ends the workday.",
    ),
    Post(
        "cable_management",
        "Cable management that survives moving the desk: one cable tray screwed under the desktop, a power strip in the tray, velcro ties (never zip ties). Fifteen minutes, no drilling into walls.",
    ),
    Post(
        "webcam",
        "Webcams: the laptop's built-in camera is the weakest link of most setups. A mid-range 1080p webcam and a window in front of you beat a 4K camera in a dark room.",
    ),
    Post(
        "power_bank",
        "Power bank for conference days: 20,000 mAh with USB-C PD is the sweet spot. Enough for a phone twice and a recorder, still allowed in cabin luggage.",
    ),
    Post(
        "iphone_call_recording",
        "iPhone call recording, now built in: start it during a call, both sides hear an announcement, and the transcript lands in Notes. For phone-heavy jobs this removes the main reason people bought a call recorder. The Plaud still wins when you do not want an announcement or use another phone.",
        thread=(
            Reply(
                "The announcement is a feature honestly, saves the consent conversation",
                who="Daniel Brooks",
            ),
            Reply("Agreed. Legally it is the cleaner option.", who=E, to=0),
            Reply("Is there an Android equivalent?", who="Sam Whitfield"),
            Reply(
                "Depends on the maker and the country. Pixel has on-device call notes in some regions.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "lecture_use",
        "Students keep asking: AI voice recorder for lectures? For 90-minute lectures the Plaud Note works well: transcript and key-term summary a couple of minutes after you stop. Ask the lecturer first, and check whether your university already provides lecture recordings.",
    ),
    Post(
        "subscription_math",
        "Subscription math for AI recorders, three years out: the device plus a paid plan costs several times the hardware price. Before buying, count your monthly recording hours. Under the free allowance: great deal. Far over it: export and transcribe yourself, or use the phone.",
        thread=(
            Reply("This should be in every review. Thanks", who="Megan L."),
            Reply(
                "The same math applies to Memoa and Voxa, their plans are similar",
                who="Daniel Brooks",
            ),
        ),
    ),
    Post(
        "charging_station",
        "One charging spot for everything: a 100 W multi-port charger on the desk and short cables. The recorder, phone, earbuds and mouse charge in one place, so nothing is dead on a Monday.",
    ),
    Post(
        "impact_driver",
        "Tool of the month: a compact **impact driver**. For furniture assembly and mounting it drives long screws without stripping them or my wrist. Not a drill replacement: for holes you still want the drill, and for concrete a hammer drill.",
    ),
    Post(
        "ai_note_apps",
        "AI note apps round-up: the transcription is a commodity now; the differences are search, export and where your data goes. Pick the app whose export you trust, because you will switch apps within three years.",
    ),
    Post(
        "smart_notebook",
        "Reusable smart notebooks: scan pages with the phone, wipe with a damp cloth. Cheap, charming, and I stopped after a month because scanning is one step too many.",
    ),
    Post(
        "precision_screwdriver",
        "A precision screwdriver set is the tool I reach for most at the desk: glasses, laptop bottoms, recorder clips. Get one with a magnetic bit holder.",
    ),
    Post(
        "recorder_comparison_2026",
        "Voice recorder comparison, late 2026 edition. **Plaud Note**: still my pick for in-person meetings and calls. **NotePin**: for people who walk and talk. **Phone apps**: good enough for video calls and quick memos, free, and on-device options keep audio private. Memoa One and Voxa Clip improved their apps but not their batteries. Details in {post:recorder_comparison} and {post:plaud_six_months}.",
        thread=(
            Reply(
                "Final answer for a consultant with 6 client meetings a day, mostly in person?",
                who="Sam Whitfield",
            ),
            Reply(
                "Plaud Note, plus a paid plan or your own transcription. At that volume the always-ready recorder pays for itself in notes you would otherwise not have.",
                who=E,
                to=0,
            ),
            Reply("And for a student?", who="Kofi A."),
            Reply(
                "Phone first. If you forget to record or your phone dies mid-lecture, then a recorder.",
                who=E,
                to=2,
            ),
            Reply("", empty=True),
        ),
    ),
    Post(
        "drill_concrete_reader",
        "Reader tip worth sharing: drilling into concrete for a wall-mounted desk shelf, start slowly without hammer mode, then switch it on, and use a piece of tape on the bit as a depth stop. Thanks to everyone who answered in the chat.",
    ),
    Post(
        "year_end",
        "Wrapping up the year: the gadgets I still use daily are the Plaud Note, the light bar and the standing desk. Returned or gave away: two webcams and a wearable that recorded everything. Thanks for the questions, keep them coming in the chat.",
        thread=(
            Reply("What's the one you'd skip entirely?", who="tinkerer_jo"),
            Reply(
                "Always-on recording wearables. Legally messy and I never read the transcripts.",
                who=E,
                to=0,
            ),
        ),
    ),
)

CHANNEL = Channel(
    username="desk_gear_weekly",
    name="Desk Gear Weekly",
    chat_id=1555021876,
    group_name="Desk Gear Weekly — readers",
    group_id=1560448812,
    tz_hours=-5,
    start=datetime(2025, 6, 2, tzinfo=UTC),
    end=datetime(2026, 11, 10, tzinfo=UTC),
    expert_as="user",
    signature="Priya",
    author_user=("Priya Raman", "user6021947530"),
    members=("Sam Whitfield", "Megan L.", "Kofi A.", "tinkerer_jo", "Daniel Brooks"),
    filler=(
        "Thanks, super helpful",
        "Saved for later",
        "Great review",
        "Would love a video version of this",
        "Agree 100%",
        "Ordered one, will report back",
    ),
    chatter=(
        "Anyone tried the new e-ink tablets for meeting notes?",
        "Is there a discount code for the Plaud anywhere?",
    ),
    posts=POSTS,
)
