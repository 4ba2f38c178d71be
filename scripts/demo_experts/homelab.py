# ruff: noqa: E501
"""Homelab Field Notes: a fictional self-hosting engineer's channel (English).

Sample text written for the demo. Power draws, runtimes, prices and model sizes are invented,
plausible round numbers, not measurements or product specifications. The author comments in
the discussion group as the channel itself.
"""

from __future__ import annotations

from datetime import UTC, datetime

from demo_experts.model import Channel, Post, Reply

E = "expert"

POSTS = (
    Post(
        "intro",
        "Welcome to **Homelab Field Notes**. Short, honest notes from the rack in my basement: what I run, what broke, what I would buy again. No affiliate links, ever. #homelab",
        filler=1,
    ),
    Post(
        "proxmox_cluster",
        "**Proxmox on used mini PCs**: the three-node cluster is live. Each node is a 6-core mini PC with 64 GB RAM, bought used for about $220. Idle draw is around 12 W per node. Lesson one: buy the same model three times. Mixed NICs and mixed BIOS menus cost me a weekend.",
        thread=(
            Reply("Why three nodes and not one bigger server?", who="Jen Ortiz"),
            Reply(
                "Quorum. With three nodes one can die or reboot for updates and the VMs move. Two nodes need a tie-breaker device, and one big box is one big single point of failure.",
                who=E,
                to=0,
            ),
            Reply("How is the noise? My rack server sounds like a hair dryer.", who="quietfan"),
            Reply(
                "Silent from two metres away. That was half the reason to go mini PC.", who=E, to=2
            ),
            Reply(
                "Which NIC do they have? Realtek gave me dropped packets under load.",
                who="nullroute",
            ),
            Reply(
                "Intel i226 on all three. I avoided the Realtek models for exactly that reason.",
                who=E,
                to=4,
            ),
        ),
    ),
    Post(
        "zfs_snapshots",
        "ZFS snapshots saved me tonight. I fat-fingered an `rm -rf` in the media share; `zfs rollback` and everything was back in 40 seconds. My policy: hourly snapshots kept for 48 hours, daily kept for 30 days. Snapshots are **not backups**, though; next post is about that.",
        thread=(
            Reply("What tool do you use to schedule them?", who="Tomasz K"),
            Reply(
                "sanoid for snapshots, syncoid for replication. One config file, easy to read six months later.",
                who=E,
                to=0,
            ),
            Reply("Hourly feels like a lot of snapshots. Does it eat space?", who="Hanna S"),
            Reply(
                "Only changed blocks cost space. On the media share that is close to nothing; on the VM disks a few GB a day.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "backups_321",
        "Backups, as promised. 3-2-1 in my lab: ZFS replication to a second box in the garage, plus `restic` to object storage every week. Test a restore every month. A backup you never restored is a rumour.",
        reply_to="zfs_snapshots",
    ),
    Post(
        "ups",
        "UPS sizing: the rack pulls 140 W on average and 260 W at peak. A 1500 VA line-interactive unit gives me about 25 minutes. Set NUT to shut the cluster down at 40% battery, not 10%: old batteries lie about what they have left.",
        thread=(
            Reply("Line-interactive vs online double conversion for a homelab?", who="rackmonkey"),
            Reply(
                "Line-interactive is fine unless your mains are really dirty. Online units are louder, hotter and use 20-40 W just by existing.",
                who=E,
                to=0,
            ),
        ),
    ),
    Post(
        "rack_photo",
        photo=True,
        thread=(
            Reply("That cable management is unreal", who="Luis Ferreira"),
            Reply("Is that a 12U? Which brand?", who="Ola N"),
            Reply(
                "12U wall mount, generic. The brand matters less than the anchors, more on that soon.",
                who=E,
                to=1,
            ),
            Reply("", empty=True),
        ),
    ),
    Post(
        "wall_rack",
        "Mounting a 12U wall rack on the concrete basement wall. What worked: a **hammer drill** (not an impact driver) with a 10 mm masonry bit, sleeve anchors rated for four times the loaded weight, and a level taped to the rack. What did not: my old cordless drill without hammer mode, which burned through a bit in two holes.",
        thread=(
            Reply("Would an SDS rotary hammer have been overkill?", who="Dev Patel"),
            Reply(
                "For eight holes, a decent hammer drill is enough. If you do concrete every month, get the SDS; it drills in a third of the time and your wrists thank you.",
                who=E,
                to=0,
            ),
            Reply("Sleeve anchors or wedge anchors?", who="bitrot_bob"),
            Reply(
                "Wedge anchors hold more in solid concrete, sleeve anchors forgive hollow block. My wall is poured concrete, but the sleeve anchors were what the store had. Still rated far above the load.",
                who=E,
                to=2,
            ),
            Reply(
                "Pro tip from a former electrician: check for conduit in the wall before drilling basement concrete. Found one the hard way once.",
                who="Tomasz K",
            ),
        ),
    ),
    Post(
        "impact_vs_drill",
        "Got asked a lot: impact driver or drill for the lag bolts? **Impact driver** for driving lag screws, every time. **Drill** for drilling holes. **Hammer drill** or SDS rotary hammer for concrete. An impact driver hammers rotationally; it will not drill concrete no matter what the video said.",
        thread=(
            Reply("So if I can only buy one tool first?", who="Jen Ortiz"),
            Reply(
                "A drill/driver. It does holes and screws, slowly. The impact driver is the second tool, the hammer drill the third, unless your walls are concrete: then the hammer drill comes first.",
                who=E,
                to=0,
            ),
            Reply("Brushless worth the extra money?", who="Hanna S"),
            Reply(
                "Yes for the impact driver, which works hard. For a drill you use twice a month, brushed is fine.",
                who=E,
                to=2,
            ),
            Reply("DeWalt or Milwaukee though?", who="rackmonkey"),
            Reply(
                "Whichever battery platform you already own. Both are good; the batteries are the expensive part.",
                who=E,
                to=4,
            ),
            Reply(
                "Honestly Ryobi is fine for homelab stuff, you're drilling eight holes a year",
                who="quietfan",
                to=4,
            ),
        ),
    ),
    Post(
        "ethernet_walls",
        "Ran Cat6 through two floors this weekend: fish tape, a 54-inch flexible drill bit, and patience. Drill through the top plates with a spade bit and check for wires with a detector first. My one mistake: I did not leave a pull string for the next cable.",
    ),
    Post(
        "tailscale",
        "Remote access: I closed every port forward. Tailscale runs on the router VM and on each phone, and subnet routing gives me the whole lab. If you self-host, stop exposing SSH to the internet.",
        edited=True,
    ),
    Post(
        "local_llm_intro",
        "**Local LLMs for coding**, first try: Ollama on the GPU box (a used 24 GB card), a 14B coder model, hooked into VS Code with the Continue extension. Autocomplete is fast enough, around 150 ms. Chat answers are fine for boilerplate and weak on the weird parts of my own code.",
        thread=(
            Reply("Which quantisation?", who="nullroute"),
            Reply(
                "Q4_K_M. Q8 was only slightly better for code and twice the memory.", who=E, to=0
            ),
            Reply("Does Continue work with JetBrains too?", who="Luis Ferreira"),
            Reply("It has a JetBrains plugin; I have not tried it.", who=E, to=2),
            Reply("Compared to Copilot?", who="Dev Patel"),
            Reply("Give me a month with both and I will write it up.", who=E, to=4),
        ),
    ),
    Post(
        "gpu_vram",
        "VRAM is the spec that matters for local coding models. 24 GB runs a 32B model at 4-bit with a decent context window. 12 GB: 7B to 14B models. Do not buy a GPU for speed; buy it for memory.",
    ),
    Post(
        "copilot_vs_local",
        "Copilot vs my local setup after a month (follow-up to [the Ollama post](post:local_llm_intro)). Copilot wins on multi-file edits and understanding the repo. The local model wins on privacy and cost. I kept both: local for homelab configs and scripts, Copilot for work.",
        thread=(
            Reply("Did you try Cursor?", who="Jen Ortiz"),
            Reply("Not yet. It is on the list.", who=E, to=0),
            Reply(
                "Privacy argument is the real one. My employer bans cloud assistants on client code.",
                who="Ola N",
            ),
            Reply(
                "That is exactly the case for local models: good enough for most completions, and nothing leaves the building.",
                who=E,
                to=2,
            ),
            Reply(
                "Speaking of employers, anyone else's company doing return-to-office this year? Ours announced 4 days",
                who="bitrot_bob",
            ),
            Reply("We got 3 days. Half the team is interviewing elsewhere", who="Dev Patel", to=4),
            Reply(
                "Full remote here, but the salary band got frozen because of it",
                who="nullroute",
                to=4,
            ),
        ),
    ),
    Post("zfs_repost", forward_of="zfs_snapshots"),
    Post(
        "whisper_server",
        "**Self-hosted transcription**: faster-whisper on the GPU box transcribes an hour of meeting audio in about three minutes with the medium model. The audio never leaves the house.",
        thread=(
            Reply("Medium or large-v3 for accents?", who="Hanna S"),
            Reply(
                "large-v3 is noticeably better with strong accents and takes about twice as long. I use medium for my own voice memos and large for meetings.",
                who=E,
                to=0,
            ),
        ),
    ),
    Post(
        "plaud_vs_selfhost",
        "People keep asking about the **Plaud Note** vs recording on the phone and transcribing at home. My take: the Plaud is a great microphone you always have on you, and the cloud summary is the actual product. If privacy matters, record on the Plaud, export the audio and run it through [my Whisper box](post:whisper_server). You lose the one-tap summary and keep your files.",
        thread=(
            Reply(
                "Can you actually export the raw audio or is it locked in their app?",
                who="Tomasz K",
            ),
            Reply(
                "As far as I know you can download the recordings from the app. I have not owned one yet, I will borrow one and check.",
                who=E,
                to=0,
            ),
            Reply(
                "Phone + Whisper is what I do. A $0 recorder beats a $159 one for me",
                who="quietfan",
            ),
            Reply(
                "The phone works until a call comes in mid-recording or the battery is at 20%. A dedicated recorder is about friction, not audio quality.",
                who=E,
                to=2,
            ),
            Reply(
                "Isn't recording meetings illegal in some places without consent?",
                who="Luis Ferreira",
            ),
            Reply(
                "In all-party consent places you need everyone's OK whatever the device. Ask first, always.",
                who=E,
                to=4,
            ),
            Reply(
                "Germany is strict about this, we had a whole works council discussion about meeting bots",
                who="Hanna S",
                to=4,
            ),
            Reply(
                "Our works council banned AI note takers entirely, even the Teams one",
                who="Ola N",
                to=6,
            ),
            Reply(
                "Same in our company. Legal said the vendor's data retention was the problem, not the recording",
                who="Jen Ortiz",
                to=7,
            ),
        ),
    ),
    Post(
        "dagster_home",
        "Yes, I run a data orchestrator at home. Dagster schedules the energy meter scrape every five minutes, the backup report and a price tracker. Why Dagster over Airflow: the asset graph shows me what is stale, and the whole thing runs in one container.",
        thread=(
            Reply("Overkill for three jobs? cron exists", who="rackmonkey"),
            Reply(
                "cron does not tell me when a job silently stopped producing data. The freshness checks are why I bother.",
                who=E,
                to=0,
            ),
            Reply("How much RAM?", who="nullroute"),
            Reply("About 400 MB idle for the webserver and daemon together.", who=E, to=2),
        ),
    ),
    Post(
        "airflow_note",
        "For the Airflow folks: I ran Airflow 2 here for a year. It worked, but scheduler, webserver, Postgres and workers were a lot of RAM for five jobs. Dagster idles at about 400 MB. At work, with a team that knows Airflow, I would not switch for that alone.",
        reply_to="dagster_home",
    ),
    Post(
        "power_bill",
        "Power bill check: the whole lab averages 140 W, about 100 kWh a month. The biggest win was turning the GPU box off at night with a smart plug and Wake-on-LAN.",
        thread=(
            Reply("100 kWh is about 35 EUR here. Worth it for what you run?", who="Hanna S"),
            Reply(
                "For me yes; it replaces three subscriptions. But measure before you buy hardware.",
                who=E,
                to=0,
            ),
            Reply(
                "Electricity prices here doubled in two years, the grid fees are the real scandal",
                who="Tomasz K",
                to=0,
            ),
            Reply(
                "Same, and now they want smart meters everywhere that report every 15 minutes",
                who="bitrot_bob",
                to=2,
            ),
            Reply(
                "Dynamic tariffs are actually great if you can shift load, I charge the car at night for half the price",
                who="Luis Ferreira",
                to=3,
            ),
            Reply("Which provider has dynamic pricing?", who="Ola N", to=4),
        ),
    ),
    Post(
        "nas_drives",
        "Drive choice for the NAS: CMR only, no SMR drives in a ZFS pool. I buy two brands for each vdev, so one bad batch does not take the whole pool down.",
    ),
    Post(
        "home_assistant",
        "Home Assistant moved from a Raspberry Pi to a VM. The Zigbee stick is passed through with USB passthrough; backups go to the NAS through the add-on.",
    ),
    Post(
        "cursor_try",
        'Tried **Cursor** for a week on the homelab Ansible repo. Agent mode renamed a variable across 30 files correctly. It also "fixed" a working firewall rule. Review every diff. Still cheaper than my time.',
        thread=(
            Reply("What model did you pick inside Cursor?", who="Dev Patel"),
            Reply(
                "The default. I did not tune anything, on purpose: I wanted the out-of-the-box experience.",
                who=E,
                to=0,
            ),
            Reply("The firewall thing is why I don't let agents near infra code", who="nullroute"),
            Reply(
                "Fair. I now run agents only on a branch with the firewall role excluded, and I diff every change before applying.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "agent_rules",
        "My rules for coding agents now (after {post:cursor_try}):\n1. small, well-described tasks\n2. run the tests before accepting anything\n3. never let it touch secrets\n4. commit before every agent run, so `git diff` shows exactly what it did",
        filler=3,
    ),
    Post(
        "battery_platform",
        "Tool note: I standardised on one 18V battery platform for lab work: drill, impact driver, hammer drill and a work light. Mixing brands means mixing chargers. Pick the platform whose hammer drill you like; the rest follows.",
    ),
    Post(
        "psa_forward",
        "PSA: a popular reverse proxy image shipped a broken release this week. Pin your image tags and read changelogs before you pull latest.",
        forwarded_from="Self-Hosted Weekly",
    ),
    Post(
        "k3s",
        "Moved the small services from Docker Compose to k3s. Honest verdict: more moving parts, nicer rollouts. For fewer than ten containers, Compose is fine and you should not feel bad about it.",
    ),
    Post(
        "monitoring",
        "Monitoring stack: Prometheus, Grafana and node_exporter, with alerts pushed to my phone by ntfy. The only alert that really matters: **backup did not run**.",
    ),
    Post(
        "plaud_followup",
        "Follow-up on the Plaud Note: I borrowed one for two weeks. Call recording through the vibration sensor works surprisingly well. Export works: you can download the audio from the app, so the self-hosted Whisper route is real. The subscription only matters if you want more cloud transcription minutes.",
        reply_to="plaud_vs_selfhost",
        thread=(
            Reply("Battery life in practice?", who="Jen Ortiz"),
            Reply("I charged it twice in two weeks with 3-4 hours of meetings a day.", who=E, to=0),
            Reply(
                "How did the cloud summary compare to your Whisper + local LLM pipeline?",
                who="Tomasz K",
            ),
            Reply(
                "Their summary was better formatted out of the box. My pipeline's transcript was as good, the summary prompt needed work. For a non-tinkerer the Plaud app is the easier path.",
                who=E,
                to=2,
            ),
            Reply("Would you buy one now?", who="quietfan"),
            Reply(
                "For in-person meetings and calls, yes, and I would skip the subscription and transcribe at home.",
                who=E,
                to=4,
            ),
        ),
    ),
    Post(
        "local_models_2026",
        "Local coding models in 2026: a 32B coder model at 4-bit on the 24 GB card handles most of my Python and Ansible. Context is the limit: 32k tokens fits one service, not the repo.",
    ),
    Post(
        "shelf_anchors",
        "A shelf in the rack corner sagged: I had used plastic anchors in drywall. Redid it with screws into a stud, found with a stud finder. Heavy things go into studs or concrete, never just drywall. Toggle bolts if there is truly no stud.",
    ),
    Post(
        "ups_battery",
        "UPS battery replaced after three years (setup in {post:ups}). Runtime had dropped from 25 to 9 minutes; the NUT self-test caught it before a power cut did.",
    ),
    Post(
        "airflow3",
        "Airflow 3 is out, with a new UI and DAG versioning. If I were starting a small team today I would still look at Dagster first. A bigger team that already knows Airflow gets most of what I disliked fixed in 3.x, so do not migrate for fashion.",
        thread=(
            Reply("We're on Airflow 2.9 with 200 DAGs. Upgrade or switch?", who="Dev Patel"),
            Reply(
                "Upgrade. A migration of 200 DAGs costs months; switch only if backfills or local testing really hurt.",
                who=E,
                to=0,
            ),
            Reply("Dagster's asset model is genuinely better for dbt though", who="nullroute"),
            Reply(
                "Agreed, for dbt-heavy stacks it is the strongest argument for Dagster.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "whisper_diarization",
        "Speaker labels: I added pyannote diarization to the Whisper box. It works for two or three speakers and gets confused in crowded rooms. Meeting notes now say who said what.",
        reply_to="whisper_server",
    ),
    Post(
        "restore_test_fail",
        "Monthly restore test **failed**. The restic repository password lived in a password manager entry I had renamed. Nothing was lost, but in a real disaster I would have been stuck. Document your restore procedure, and print it.",
        thread=(
            Reply(
                "Printing it is underrated. My restore doc is in a drawer next to the UPS",
                who="Ola N",
            ),
            Reply("The drawer is the correct place for it.", who=E, to=0),
        ),
    ),
    Post(
        "energy_dashboard",
        "Built a Grafana dashboard for the house energy meter, fed by the Dagster job. Found out the dehumidifier uses more than the whole rack.",
    ),
    Post("agent_rules_repost", forward_of="agent_rules"),
    Post(
        "llm_tools_summary",
        "Six months of LLM coding tools, summarised: autocomplete saves time daily; agents save time weekly and cost time monthly, when they break something subtle. Local models are good enough for configs and scripts; Copilot and Cursor are better on large codebases.",
        thread=(
            Reply(
                '"cost time monthly" is so true. Spent a day finding a bug an agent introduced in a date parser',
                who="bitrot_bob",
            ),
            Reply(
                "Tests are the only defence I know. Agents are great at making code look right.",
                who=E,
                to=0,
            ),
            Reply("Which would you pay for if only one?", who="Luis Ferreira"),
            Reply(
                "For work code, Copilot. For my own projects, nothing: the local setup is enough.",
                who=E,
                to=2,
            ),
        ),
    ),
    Post(
        "concrete_tip",
        "Drilling concrete, a tip I learned the hard way: start the hole **without** hammer mode for a few seconds so the bit does not wander, then switch hammer on. Vacuum the dust out of the hole before setting the anchor, or it will not hold its rating.",
        thread=(
            Reply("Blow it out or vacuum?", who="Tomasz K"),
            Reply(
                "Vacuum, or a hand pump and a brush. Blowing with your mouth puts concrete dust in your eyes, ask me how I know.",
                who=E,
                to=0,
            ),
        ),
    ),
    Post(
        "voice_workflow",
        "My voice-notes workflow now: the **Plaud Note** for meetings and calls, the phone's recorder for quick memos, and everything lands on the Whisper box overnight and becomes Markdown in my notes vault. Subscription cost: zero. The Plaud's value for me is that it is always charged and one switch away.",
        thread=(
            Reply("How do you get files from the phone to the box automatically?", who="Hanna S"),
            Reply(
                "Syncthing folder. The Plaud recordings I export by hand once a day, that part is not automated.",
                who=E,
                to=0,
            ),
            Reply(
                "Would a phone app with on-device transcription not do all of this?", who="quietfan"
            ),
            Reply(
                "For memos, yes, that is what I use. For a two-hour meeting I do not want my phone busy, hot and at 30%.",
                who=E,
                to=2,
            ),
            Reply(
                "The NotePin version clips on, might be better for walking meetings", who="Ola N"
            ),
        ),
    ),
    Post(
        "airflow_vs_dagster_again",
        "Asked again this week: Airflow or Dagster for a homelab? Dagster. For a company with working Airflow, do not migrate for fashion; migrate when backfills and local testing hurt more than a migration would.",
    ),
    Post(
        "gpu_second",
        "Considering a second GPU for bigger local models. Two 24 GB cards would run a 70B model at 4-bit, slowly. For coding assistants latency matters more than size, so I am staying with one card for now.",
    ),
    Post(
        "year_review",
        "Eighteen months of notes. **Would buy again**: the mini PCs, the UPS, the hammer drill. **Would not**: SMR drives, the second switch. **Would do first**: backups and a printed restore procedure. Thanks for reading and for the questions in the chat.",
        thread=(
            Reply(
                "Thanks for the honest notes, the concrete drilling posts saved my wall",
                who="Dev Patel",
            ),
            Reply("What's next for the lab?", who="Jen Ortiz"),
            Reply("Less hardware, more restore drills. And maybe solar.", who=E, to=1),
        ),
    ),
)

CHANNEL = Channel(
    username="homelab_field_notes",
    name="Homelab Field Notes",
    chat_id=1873204519,
    group_name="Homelab Field Notes Chat",
    group_id=2011456733,
    tz_hours=1,
    start=datetime(2025, 5, 12, tzinfo=UTC),
    end=datetime(2026, 11, 9, tzinfo=UTC),
    expert_as="channel",
    members=(
        "Tomasz K",
        "Jen Ortiz",
        "rackmonkey",
        "Dev Patel",
        "nullroute",
        "Hanna S",
        "Luis Ferreira",
        "quietfan",
        "Ola N",
        "bitrot_bob",
    ),
    filler=(
        "Bookmarked, thanks",
        "Great write-up as always",
        "This is exactly what I needed this week",
        "Did the same last year, can confirm",
        "Would love a follow-up on this",
        "Printing this for my future self",
        "Thanks! Clear and to the point",
        "Adding this to my homelab wiki",
    ),
    chatter=(
        "Hi all, new here. Anyone running Proxmox on ARM?",
        "Off topic: anyone selling a used 24 GB GPU in the EU?",
        "Reminder that backups day is every day :)",
    ),
    posts=POSTS,
)
