# ruff: noqa: E501
"""Theme 3: AI voice recorders and note-taking gadgets (r/gadgets, r/productivity).

Sample text written for the demo. Plaud Note / NotePin details (battery hours, plan minutes,
prices) are invented round numbers for the demo, not product specifications; "Memoa One" and
"Voxa Clip" are made-up competitors.
"""

from __future__ import annotations

from demo_content.model import Theme, Topic

VERSUS_PHONE = Topic(
    key="plaud_vs_phone",
    subreddits=("gadgets", "productivity"),
    titles=(
        "Plaud Note vs just using my phone's voice recorder app?",
        "Is a dedicated AI voice recorder worth it when Otter exists?",
        "Plaud Note or phone + Whisper for recording client meetings",
        "Why would anyone buy a Plaud when phones transcribe for free now?",
        "Dedicated voice recorder vs phone for lectures, which is better?",
        "Tried a Plaud for 3 months, then went back to my phone. AMA",
        "Plaud vs the Pixel Recorder app for meeting notes",
        "Phone app vs AI voice recorder gadget for a sales job",
        "Does the plaud.ai summary beat pasting my transcript into ChatGPT?",
        "Recording phone calls: Plaud's contact mic vs call recording apps",
        "Plaud Note vs phone voice recorder in {year}: still worth buying?",
    ),
    contexts=(
        "I'm in 5 to 8 meetings a day, half in person and half on calls, and my notes are terrible.",
        "My phone already transcribes, but I keep forgetting to hit record, or the recording stops when a call comes in.",
        "I'm a freelance consultant and I bill by the hour, so notes are basically my product.",
        "The Plaud Note is about $159 and the phone is free, so I need to be convinced.",
        "Sales rep, mostly phone calls from the car and the occasional on-site demo.",
    ),
    questions={
        "Which phone do you have?": ("iPhone 15.", "Pixel 8."),
        "Are most of your meetings in person or on calls?": (
            "About half and half.",
            "Mostly phone calls from the car.",
        ),
        "Are you on the free plan or Pro?": (
            "Free, so far.",
            "Pro. The free minutes lasted about a week for me.",
        ),
    },
    asks=(
        "Is the dedicated voice recorder actually better, or is it a gadget tax?",
        "What do you use, and would you buy it again?",
        "Which gives better transcripts in real meetings?",
        "Plaud owners: what made it worth it for you?",
    ),
    facts=(
        "The big difference isn't audio quality, it's friction. The Plaud is one switch on the back of my phone, so I record every meeting now instead of 'when I remember'.",
        "For in-person meetings a phone on the table and a Plaud on the table sound about the same. Transcript quality depends more on the model than on the mic.",
        "Plaud's summary templates (meeting, sales call, lecture) are decent, but you can get similar results pasting a transcript into any LLM with a good prompt.",
        "Check your local laws on recording. In all-party consent places you need everyone's OK no matter which device you use.",
        "Whatever you use, test it in your actual meeting room first. Echoey rooms hurt every device.",
        "The summary is only as good as the transcript. If names and jargon come out wrong, fix them before generating the summary.",
        "Think about where the audio goes. A phone app with on-device transcription keeps it local; most AI voice recorders send it to a cloud.",
    ),
    side_a=(
        "The Pixel Recorder app transcribes on-device, for free, with speaker labels. I can't justify another device and another subscription.",
        "My phone plus a free Whisper app gets me transcripts I'm happy with. Total cost $0, and nothing goes to a cloud I don't control.",
        "I tried the Plaud for a month and the subscription math killed it: 300 free minutes a month is about five meetings for me.",
        "The iPhone's built-in call recording and transcription took away the main reason to buy one, at least for me.",
        "The phone has the better screen and search anyway. With the Plaud I still ended up reading everything in the phone app.",
        "Otter on my phone joins my calendar's video calls automatically. For remote-first work that covers almost everything.",
    ),
    side_b=(
        "The Plaud's call recording through the vibration sensor is the killer feature. It picks up both sides of a call through the phone's body, no app permissions, no beeps.",
        "Battery is great: about 30 hours of recording on the Note, and I charge it roughly once a week with 4 to 6 hours of meetings a day.",
        "I use the Plaud because my phone is my hotspot, my calendar and my Slack during meetings. Recording on it meant notifications interrupted it or it just stopped.",
        "The plaud.ai web app makes every meeting searchable. Finding 'what did the client say about the budget in March' in ten seconds is worth the subscription for a consultant.",
        "I bought the Plaud Note for lectures and it's been flawless: 90-minute lectures, with the transcript and a summary of key terms about two minutes after I stop.",
        "The Plaud is always charged and always in the same place. My phone is at 30% by 3pm and I'm not spending that on a 2-hour recording.",
    ),
    counters=(
        "The 'AI voice recorder' category is a subscription business with a piece of hardware attached. Do the 3-year math before buying.",
        "Phone transcription is worse than people here claim. With crosstalk and accents the free apps fell apart for me.",
    ),
    gems=(
        "If you go the phone route, record in airplane mode with Do Not Disturb and an allowlist. Both iOS and Android stop or gap a recording when a call comes in, and that's the real reason people lose the end of meetings.",
        "On the Plaud Note, switch the slider to call mode before the call connects. If you flip it mid-call the first file ends and the second starts after a 2 to 3 second gap where you lose words.",
    ),
    dissent=(
        "Dissenting from the Plaud fans: I'm a paralegal and we tested a Plaud Note, a $60 Sony voice recorder and an iPhone side by side in 12 deposition-style sessions. Transcription accuracy was within 2% for all three when the audio went through the same Whisper model. You're paying for the workflow and the app, not the recording. That's fine, but be honest about it.",
    ),
)

NOTE_REVIEW = Topic(
    key="plaud_note_review",
    subreddits=("gadgets", "productivity"),
    titles=(
        "Plaud Note: 6 month review from someone in meetings all day",
        "Plaud Note battery life: is 30 hours real?",
        "Plaud Note magnetic case keeps falling off my phone",
        "Plaud Note transcription accuracy with strong accents?",
        "Is the Plaud Note worth $159? Honest long-term review",
        "Plaud Note won't sync, stuck at 0% transfer",
        "Plaud Note audio quality in a large conference room",
        "Did a firmware update kill my Plaud's battery?",
        "Plaud Note one year later: what I love and what annoys me",
        "Plaud Note as a voice recorder for journalism interviews",
        "Plaud Note owners, what settings do you use?",
    ),
    contexts=(
        "I'm a project manager and use it for standups, client calls and the occasional 3-hour workshop.",
        "Bought it on sale for $139 in March and I'm still on the free plan.",
        "It's stuck to my iPhone 15 Pro with the MagSafe ring that came in the box.",
        "Freelance journalist. Most interviews are in cafés or on the phone.",
    ),
    questions={
        "How's the battery after a year?": (
            "Still around 25 hours of recording per charge.",
            "Noticeably worse, maybe 20 hours, but still a week for me.",
        ),
        "Which firmware are you on?": (
            "Whatever the latest is, it auto-updates through the app.",
            "One behind. I wait a couple of weeks after each release.",
        ),
        "Do you use the MagSafe ring or a case?": (
            "The ring on a thin clear case.",
            "No case, straight on the back of the phone.",
        ),
    },
    asks=(
        "Anyone else seeing this?",
        "Would you buy it again?",
        "Any tips for getting the most out of it?",
    ),
    facts=(
        "Battery life has held up: I'm at roughly 28 hours of recording per charge after 8 months, and standby lasts weeks.",
        "Bluetooth transfer is slow for long recordings; a 2-hour meeting takes a few minutes. The Wi-Fi transfer mode in the app is much faster.",
        "Audio is great within about 3 meters. In a big conference room put it in the middle of the table, not at your seat.",
        "The magnet is weaker than Apple's own. With a thick case it slides off; with a thin MagSafe case it's fine.",
        "Accents: it handles my team (Indian, Polish and Brazilian English) well. Speaker labels get confused when people talk over each other.",
        "Recordings stay on the device (64GB) until you transfer, so with no signal you don't lose anything.",
        "If transfer sticks at 0%, force-close the app, toggle Bluetooth, and make sure the device isn't still recording. That fixed it every time for me.",
        "Summaries are good for action items and weaker on nuance. I always skim the transcript for anything important.",
        "For interviews the mic is fine at 1 meter. Beyond that, background noise creeps in.",
        "I record at the highest quality setting; file size doesn't matter with 64GB on board.",
        "Firmware updates have mostly been fine, though one changed the LED behaviour and confused me for a week.",
        "Call mode is what sold me: the vibration sensor picks up both sides of a call through the phone's body, no app needed.",
        "Turn on delete-after-sync if you don't need copies on the device; otherwise check storage every couple of months.",
        "The app's 'ask about this recording' chat is handy for finding one decision without reading the whole transcript.",
        "Charging takes about two hours with the magnetic cable. Don't lose the cable, it's proprietary.",
    ),
    counters=(
        "Speaker labeling is bad enough that I wouldn't use it for anything legal. Fine for personal notes.",
        "The build is nice but the switch is too easy to bump in a pocket. I ended up with 40 accidental recordings.",
    ),
    gems=(
        "Watch the LED when you start: if it blinks red instead of staying solid, storage is nearly full. The app doesn't warn you until it's too late, so export and delete old recordings monthly.",
        "Rename the speakers in the plaud.ai web app and then hit 'regenerate summary'. The summary gets much better because it stops attributing everything to 'Speaker 2'.",
    ),
    dissent=(
        "Not a popular view here, but after 10 months my Plaud Note is in a drawer. The hardware is fine. The problem is that 90% of my meetings are on Zoom or Teams, which already transcribe for free. A dedicated voice recorder only makes sense if most of your conversations are in person or on the phone.",
    ),
)

NOTEPIN = Topic(
    key="notepin",
    subreddits=("gadgets", "productivity"),
    years=(2024, 2026),
    titles=(
        "Plaud NotePin vs Plaud Note, which one for in-person meetings?",
        "The NotePin as a necklace is weird, how do you wear yours?",
        "Plaud NotePin battery life in real use?",
        "Is the Plaud NotePin worth it over the Note?",
        "Wearing the NotePin all day: privacy etiquette?",
        "NotePin audio clipped to a shirt vs sitting on the table",
        "Plaud NotePin for doctors and clinical notes?",
        "Does the NotePin wristband accessory actually work?",
    ),
    contexts=(
        "I'm on my feet a lot (site visits, walk-throughs), so a phone-mounted voice recorder doesn't fit my day.",
        "I already have the Plaud Note and I'm considering the NotePin for conferences.",
        "Physical therapist, sessions are 45 minutes and I write notes at night.",
    ),
    questions={
        "Do you wear it as a clip or a necklace?": (
            "Clip, on the collar.",
            "Necklace at conferences, wristband at the gym.",
        ),
        "How long are your days, battery-wise?": (
            "Ten hours of site visits, it ends the day around 40%.",
            "Short, maybe 3 hours of recording a day.",
        ),
        "Do you tell people you're recording?": (
            "Always, first thing.",
            "For clients yes; for internal walk-throughs everyone knows by now.",
        ),
    },
    asks=(
        "Which form factor works better for you?",
        "How's the battery in practice?",
        "Anyone using it this way?",
    ),
    facts=(
        "The NotePin lasts about 20 hours of recording for me, so a full conference day is easy. The charging cradle is tiny and easy to lose.",
        "Clipped on a collar the NotePin is great for your own voice and okay for the person in front of you. On a table it's worse than the Note.",
        "The NotePin is for walking conversations, the Note for desk meetings and phone calls. If you do calls, get the Note.",
        "Tell people you're recording. A visible pin actually makes that conversation easier than a hidden phone.",
        "The magnetic clip holds on a t-shirt, but on a thick sweater it drags the fabric down.",
        "For clinical notes, check whether your employer allows cloud transcription at all. Many hospitals don't, whatever the device.",
        "The wristband sounds gimmicky but it's good for trainers and anyone who teaches standing up.",
        "The NotePin's mic is tuned for close speech. Keep it within arm's length of whoever matters most in the conversation.",
        "Battery anxiety was unfounded for me. A full day of site visits uses about half the charge.",
        "The NotePin uses the same app as the Note, so switching devices doesn't change the workflow at all.",
    ),
    counters=(
        "The NotePin is a solution looking for a problem. If you're walking around, the phone in your shirt pocket records just as well.",
        "Wearables that record are socially awkward no matter how small they are. People act differently once they notice it.",
        "The NotePin's audio is noticeably worse than the Note for anyone more than a meter away. Fine for you, meh for everyone else.",
    ),
    gems=(
        "Clip the NotePin mic-side up on a lapel. Sounds trivial, but facing down it picks up fabric rustle, and flipping it made my walk-through transcripts noticeably cleaner.",
        "Learn the haptics: one short buzz means recording started, a double buzz means it did NOT start (usually storage full or battery low). Check that before an important meeting.",
    ),
)

PLANS = Topic(
    key="subscription_privacy",
    subreddits=("productivity", "gadgets"),
    titles=(
        "Plaud subscription: are the free 300 minutes enough?",
        "Where does plaud.ai store my recordings? Privacy question",
        "AI voice recorder subscriptions are getting out of hand",
        "Can I use my own Whisper model with Plaud recordings?",
        "Is it legal to record meetings with these AI pins?",
        "Exporting all my Plaud recordings before cancelling",
        "Plaud unlimited plan, worth it?",
        "Company IT banned AI note takers, what are you all doing?",
    ),
    contexts=(
        "I'm using about 900 minutes a month on plaud.ai and the free tier runs out in the first week.",
        "Our company has strict data-handling rules and legal asked where the audio goes.",
        "I work in the EU and half my clients are in Germany.",
    ),
    questions={
        "How many minutes a month do you use?": (
            "About 900.",
            "Maybe 200, so the free tier is fine.",
        ),
        "Do you export the audio or just the transcript?": (
            "Both, the audio goes into a folder on my NAS.",
            "Transcript only.",
        ),
        "Which country are you in?": ("Germany.", "US, California, so all-party consent."),
    },
    asks=(
        "What plan are you on, and is it worth it?",
        "How do you handle privacy and consent?",
    ),
    facts=(
        "The free tier (300 minutes a month) is fine for a few meetings a week. I'm on the Pro plan (~1,200 minutes) and have never hit the cap.",
        "You can export the raw audio (MP3/WAV) and run Whisper yourself. I do that for sensitive client calls and use the cloud for the rest.",
        "Recordings live on the device until you sync; transcription happens in their cloud. If that's a problem, export the audio and transcribe locally.",
        "Consent rules vary: one-party vs all-party consent differs by state and country. I always ask 'mind if I record so I can focus?' and nobody has ever said no.",
        "Before cancelling, bulk export the transcripts (TXT/DOCX) and the audio from the web app while you still have the plan.",
        "For company use, ask the vendor for their data processing agreement and retention settings. If they can't produce one, IT is right to say no.",
        "Whisper large-v3 on a laptop GPU transcribes a 1-hour meeting in about 4 minutes; faster-whisper with int8 on CPU takes around 15.",
        "Check the retention settings in the app. You can usually have recordings deleted from the cloud after transcription.",
        "If you record in the EU, GDPR covers other people's voices too. A quick verbal consent at the start handles most situations.",
        "The paid plans mostly buy minutes and longer files. The device itself works the same on every plan.",
    ),
    counters=(
        "Subscriptions are the business model. If you don't want one, buy a $40 voice recorder and run Whisper locally.",
        "The privacy worries are overblown for most people. Your Zoom calls are already transcribed in someone's cloud.",
    ),
    gems=(
        "If you transcribe Plaud audio locally, use faster-whisper (e.g. via whisper-ctranslate2) with `--vad_filter True` and `--condition_on_previous_text False`. Without those, long silences in meetings produce repeated hallucinated lines like 'Thank you for watching'.",
        "Unused minutes don't roll over, so I keep a 'to transcribe' folder of older audio and batch it a couple of days before the monthly reset.",
    ),
)

RIVALS = Topic(
    key="competitors",
    subreddits=("gadgets", "productivity"),
    titles=(
        "Best AI voice recorder in {year}? Plaud, Memoa and Voxa Clip compared",
        "Cheaper alternative to the Plaud Note that isn't garbage?",
        "Cheap Sony voice recorder + Whisper vs an AI recorder",
        "Zoom H1n for interviews vs Plaud for meetings",
        "Memoa One vs Plaud Note: anyone tried both?",
        "Voxa Clip review after 2 months",
        "AI pendants that record everything: useful or creepy?",
        "What do journalists use as a voice recorder now?",
    ),
    contexts=(
        "I mostly record interviews for a podcast side project and meetings for work.",
        "Budget is under $100 if possible.",
    ),
    questions={
        "What's your budget?": ("Under $100.", "Up to $200 if it's clearly better."),
        "Interviews or meetings, mostly?": (
            "Interviews, for a podcast.",
            "Meetings, mostly in person.",
        ),
        "Do you need a subscription-free option?": (
            "Ideally, yes.",
            "Not necessarily, I just want it to be worth it.",
        ),
    },
    asks=(
        "What are you using?",
        "Any hidden downsides?",
    ),
    facts=(
        "Memoa One has a nicer screenless design than the Voxa, but its app is clunky. Plaud's app was the most polished of the three I tried.",
        "A basic Sony voice recorder with a decent mic plus local Whisper gets you excellent transcripts for under $80 and no subscription.",
        "For podcast-quality interviews a Zoom H1n or H4n is in a different class. AI voice recorders are tuned for speech intelligibility, not sound quality.",
        "The Voxa Clip's battery is its weak point: about 9 hours of recording, which is one long workday.",
        "Always-on pendants that record everything are a legal minefield in all-party consent places. I tried one for a week and turned it off.",
        "Journalists I know use a phone plus a backup recorder. Redundancy beats features.",
        "Memoa supports more transcription languages out of the box; Plaud was better at English with technical terms.",
        "Check how each app exports. Some lock transcripts inside the app; you want TXT or markdown and the raw audio at minimum.",
        "Battery claims assume continuous recording at default quality. Highest quality or frequent syncing eats into them.",
        "A $20 lavalier mic into your phone beats every tabletop AI voice recorder for one-on-one interviews.",
    ),
    counters=(
        "Plaud is overpriced for what it is; the Memoa One does 90% of it for $99.",
        "Feature comparisons miss the point. The app and the transcription model matter far more than the hardware, and those change every few months.",
        "Dedicated recorders from the old brands are dead simple and last a decade. The AI gadgets will be e-waste when the company pivots.",
    ),
    gems=(
        "Whatever recorder you use, set it on a folded microfiber cloth on the table. It decouples the mic from table thumps and laptop typing, and the transcript gets fewer garbage words.",
    ),
)

WORKFLOW = Topic(
    key="workflow",
    subreddits=("productivity",),
    titles=(
        "My workflow: Plaud transcripts into Obsidian daily notes",
        "How do you actually use AI meeting summaries? Mine pile up unread",
        "Getting Plaud action items into Todoist/Notion automatically",
        "Best summary template for 1:1 meetings?",
        "Voice notes while driving: what's your capture system?",
        "Using AI transcripts for performance reviews, good idea?",
        "Custom summary prompts for client discovery calls",
        "I record every meeting now with a voice recorder. Here's what changed after 3 months",
    ),
    contexts=(
        "I have ~200 Plaud transcripts sitting in plaud.ai and no idea how to get value out of them.",
        "I use Obsidian with a daily note and a People folder.",
        "Team lead with 9 direct reports, so lots of 1:1s.",
    ),
    questions={
        "What does your template look like?": (
            "Decisions, action items with owners, open questions. That's it.",
            "I use the default meeting template, which is probably the problem.",
        ),
        "Do you use Obsidian or Notion?": ("Obsidian.", "Notion, for the team."),
        "How long does processing take you per meeting?": (
            "Five minutes, right after the meeting.",
            "Too long. That's why they pile up.",
        ),
    },
    asks=(
        "What's your system?",
        "How do you make summaries actionable?",
    ),
    facts=(
        "The trick is processing within 24 hours. I spend 5 minutes after each meeting moving action items into my task manager and ignore the rest.",
        "I use a custom template: decisions, action items with owner and date, open questions, and 'quotes worth keeping'. The default summaries are too generic.",
        "Export markdown into an Obsidian folder with the date in the filename. A Dataview query then lists every meeting with a given person.",
        "Zapier or Make can watch the email export and create Todoist tasks from lines that start with 'Action:'.",
        "For driving: voice memo, auto-transcribed into an inbox note. Review the inbox daily or it becomes a graveyard.",
        "Recording everything made me listen better. I stopped typing in meetings and started asking better questions.",
        "Name recordings right away. 'Recording 47' is how transcripts become a graveyard.",
        "Summaries are great for people who missed the meeting. I send mine within the hour and people actually read them.",
        "Tag transcripts by project, not by date. The date is already in the filename; the project is what you search for later.",
    ),
    counters=(
        "Recording every meeting is a crutch. If something was important, write it down; if not, let it go.",
        "Automating summaries into your task manager just creates a second inbox. I stopped after a month.",
        "Templates make every meeting summary look the same and hide what actually mattered. I prefer writing three lines myself.",
    ),
    gems=(
        "Say the agenda out loud in the first 30 seconds of the recording. The summary follows your structure instead of inventing one, and the section headings come out matching your agenda.",
    ),
)

LECTURES = Topic(
    key="lectures_students",
    subreddits=("productivity", "gadgets"),
    titles=(
        "Using an AI voice recorder for university lectures: worth it?",
        "ADHD and meetings: a voice recorder changed my life",
        "Plaud for med school lectures, how's the terminology?",
        "Recording lectures: is it allowed? What do professors think?",
        "Best way to turn 2h lecture transcripts into study notes",
        "Does the Plaud Note handle a big lecture hall?",
    ),
    contexts=(
        "Second-year engineering student; most lectures are 90 minutes with slides.",
        "I have ADHD, and in meetings I can either listen or take notes, never both.",
    ),
    questions={
        "How big is the lecture hall?": ("About 300 seats.", "Small, maybe 40 people."),
        "Does your university allow it?": (
            "For personal study, yes.",
            "I got it approved through disability services.",
        ),
        "Which subject?": ("Medicine.", "Mechanical engineering."),
    },
    asks=(
        "Anyone doing this?",
        "Tips for making it actually useful?",
    ),
    facts=(
        "Sit in the first three rows. In a 300-seat hall the Plaud picks up the lecturer fine from there; from the back it picks up the students around you.",
        "Medical terms are hit and miss. Add your terms to the custom vocabulary or fix them in the transcript, and the summary gets much better.",
        "Ask the professor first. Most are fine with personal recording, and disability services can make it an official accommodation.",
        "Turn transcripts into flashcards: paste a section into an LLM, ask for 10 Q/A pairs, import them into Anki.",
        "With ADHD, knowing everything is recorded took away the anxiety of missing something, so I actually pay attention now.",
        "Pair the recording with the slides. A summary that references slide numbers is far more useful for revision.",
        "Review the summary the same day and the transcript only for the parts you didn't follow. Rereading full transcripts is a trap.",
        "Check your university's policy: some ban recordings for redistribution but allow them for personal study.",
    ),
    counters=(
        "Recording lectures made me lazier. I never reread anything, and handwritten notes stuck better.",
        "If the lectures are already recorded by the university, a personal voice recorder adds nothing. Check the course page first.",
        "AI summaries of lectures miss what the professor emphasizes verbally. You still need to be there and pay attention.",
    ),
    gems=(
        "Start recording 2 minutes early and say the course code and lecture number out loud. Sorting 60 recordings at the end of term is trivial when every transcript starts with 'CS201 lecture 14'.",
    ),
)

THEME = Theme(
    key="recorders",
    topics=(VERSUS_PHONE, NOTE_REVIEW, NOTEPIN, PLANS, RIVALS, WORKFLOW, LECTURES),
    questions={
        "Is that the Note or the NotePin?": ("The Note.", "The NotePin."),
        "What language are your meetings in?": ("English, with some German.", "Mostly English."),
        "How long are your meetings usually?": (
            "30 to 60 minutes.",
            "Anywhere from 15 minutes to 3-hour workshops.",
        ),
        "Does it handle crosstalk okay?": (
            "Not great. Speaker labels get mixed up when people talk over each other.",
            "Better than I expected, as long as it's two or three people.",
        ),
        "Would you buy it again?": (
            "Yes, no hesitation.",
            "Probably, but I'd think harder about the subscription.",
        ),
    },
    frames=(
        "Had mine for {n} months.",
        "Consultant here, I've recorded client meetings for {n} years.",
        "Used one daily for about {n} months now.",
        "Project manager, {n} years of too many meetings.",
    ),
    name_parts=(
        "memo",
        "meeting",
        "notes",
        "lecture",
        "transcript",
        "standup",
        "agenda",
        "inbox",
        "journal",
        "focus",
        "calendar",
        "pomodoro",
        "podcast",
        "consult",
        "minutes",
        "gtd",
    ),
    flairs={
        "gadgets": ("Misc", "Wearables", "Phones", "Audio"),
        "productivity": ("Question", "Tips", "Software", "Tool"),
    },
)
