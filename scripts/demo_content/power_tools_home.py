# ruff: noqa: E501
"""Theme 1, continued: batteries, mounting heavy things, a first tool kit. Sample text, invented."""

from __future__ import annotations

from demo_content.model import Topic

BATTERIES = Topic(
    key="battery_platforms",
    subreddits=("Tools", "DIY", "HomeImprovement"),
    titles=(
        "Ryobi One+ for a new homeowner, or save up for DeWalt/Milwaukee?",
        "Are off-brand batteries from Amazon safe to use?",
        "How long do lithium tool batteries actually last?",
        "Batteries die fast in my cold garage, anything I can do?",
        "Is the Makita 18V LXT line underrated in North America?",
        "Storing cordless tool batteries over winter: charged or not?",
        "Bought into Ryobi 5 years ago, everything still works. AMA",
        "Do higher Ah batteries actually make tools more powerful?",
        "Battery adapter to run DeWalt packs on Milwaukee tools?",
    ),
    contexts=(
        "My garage gets down to about 20°F in January and the impact barely makes it through a box of screws.",
        "Amazon has three third-party packs for the price of one official one.",
        "I've got 6 Ryobi tools and 4 batteries, all from 2019.",
        "Budget is tight after the house purchase and the yellow/red drill kits cost twice as much.",
        "Currently on DeWalt 20V: a drill, an impact driver and three batteries of different ages.",
    ),
    questions={
        "How cold does the garage actually get?": (
            "Around 15°F on the worst nights.",
            "Usually mid 30s, rarely below 25.",
        ),
        "Which charger are you using?": (
            "The basic one that came in the kit.",
            "The rapid charger, bought separately.",
        ),
        "How old are the packs?": ("Oldest is 2018, newest 2022.", "All from 2019."),
    },
    asks=(
        "What's your experience?",
        "Worth it, or am I asking for trouble?",
        "Should I worry?",
    ),
    facts=(
        "Knockoff batteries are where I draw the line. The cells are often lower grade and some skip the thermal protection. Not worth a garage fire to save $40.",
        "Store lithium packs at around 40 to 60% charge somewhere that stays above freezing. Don't leave them on the charger all winter.",
        "Cold lithium packs lose a lot of capacity. Keep them inside and bring them out when you need them; they warm up once they're working.",
        "Higher Ah packs do give more power on high-draw tools because the load is split over more cells. On a drill you'll mostly notice runtime.",
        "My Ryobi One+ drill from 2016 still works. Ryobi is fine for homeowner use; the motors just bog earlier under heavy loads.",
        "Name-brand packs last 5 to 7 years of homeowner use. Heat kills them faster than use does, so don't leave them in a hot car.",
        "Makita LXT is great and charges fast, about 45 minutes for a 5Ah on the rapid charger. It just doesn't get the same marketing in the US.",
        "Don't mix platforms just because one tool was on sale. Two chargers and two battery types gets annoying quickly.",
        "Ryobi's 40V outdoor tools are genuinely good. The mower and blower replaced my gas ones.",
        "Off-brand adapters are fine for lights and fans, but some have no low-voltage cutoff and you can over-discharge your packs.",
        "Don't store packs fully drained. A lithium pack left at zero for months can drop below the voltage where the charger will accept it.",
        "If a battery is hot after heavy use, let it cool before charging. Most chargers wait anyway, but it's easier on the cells.",
        "Higher-capacity packs are heavier. For overhead work a 2Ah pack on the drill is much less tiring than a 6Ah brick.",
        "Buy batteries during the holiday sales and bare tools the rest of the year. That's how a platform gets cheap.",
        "Bluetooth batteries and tool tracking are nice on a job site and pointless for a homeowner.",
    ),
    counters=(
        "Honestly third-party batteries have been fine for me for 3 years. You're mostly paying for the logo.",
        "A cold garage is fine for storage. The packs just need to warm up before charging, and the chargers won't charge them below freezing anyway.",
    ),
    gems=(
        "If a pack reads dead and won't charge, it's often just below the charger's minimum voltage. Leave it on the charger and reseat it a few times; newer chargers send a small wake-up current that brings it back. If a cell is under 2.5V though, retire it.",
        "For a cold garage, a $25 insulated box with a 40W reptile heat mat on a thermostat keeps packs at 50°F. Mine has kept 8 packs happy through three Minnesota winters.",
    ),
    dissent=(
        "Everyone dunks on Ryobi, but I'm a contractor and our crew uses Ryobi for the 'truck tools' that get lost and abused. In four years we've replaced two drills and zero batteries. For a homeowner Ryobi isn't the compromise pick, it's the correct pick.",
    ),
)


MOUNTING = Topic(
    key="mounting_heavy",
    subreddits=("HomeImprovement", "DIY"),
    titles=(
        "Mounting a 65 inch TV on drywall, studs are 16 inches apart but off-center",
        "Toggle bolts vs lag screws into studs for a floating shelf?",
        "How do you find studs when the stud finder beeps everywhere?",
        "Hanging a heavy mirror on plaster and lath, help",
        "Can I mount a TV on metal studs?",
        "Installed a floating shelf and it's already sagging",
        "Drilled into something behind the drywall and it's wet??",
        "Mounting cabinets to the wall for a garage workshop",
        "TV above the fireplace: yes or no?",
    ),
    contexts=(
        "The TV is about 55 lbs and I want it above the fireplace on a tilt mount.",
        "The house is 1940s plaster and lath and every hole I drill crumbles.",
        "I'm using the hardware kit that came with the bracket (six lag bolts and some plastic anchors).",
        "Condo with steel studs, and the HOA wants no damage to the common walls.",
        "I have an 18V drill, a cheap stud finder and a level. Nothing fancy.",
    ),
    questions={
        "How heavy is the TV?": (
            "About 55 lbs according to the spec sheet.",
            "Around 40 lbs without the stand.",
        ),
        "Drywall or plaster?": ("Plaster and lath, 1940s house.", "Half-inch drywall, 2005 build."),
        "Did you check for wires and pipes first?": (
            "Yes, with the stud finder's AC mode and by looking in the basement for what runs up that wall.",
            "There's an outlet about 2 feet below, so I'm assuming there's a wire in that bay.",
        ),
    },
    asks=(
        "How do I do this safely?",
        "What hardware should I use?",
        "Is this going to fall in a year?",
    ),
    facts=(
        "Lag into at least two studs: 5/16 lags, at least 2-1/2 inches into wood, pre-drilled with a 3/16 bit. That holds far more than any TV.",
        "If the studs are off-center, get a mount with a wide wall plate and a sliding bracket so you can offset the TV. Most full-motion mounts slide 6+ inches.",
        "Snaptoggles are the best drywall anchor, rated around 80 lbs each in 1/2 inch drywall for the 1/4-20 size. For a TV I'd still go into studs.",
        "Cheap stud finders on plaster are useless. Slide a strong neodymium magnet along the wall to find the nails in the studs.",
        "Above a fireplace, check the heat first. Tape a thermometer where the TV would go and run the fire for an hour. Over 100°F is a no.",
        "Metal studs: use toggles rated for steel studs across two studs, or open the wall and add wood blocking.",
        "For plaster, drill with a masonry bit on low speed with no hammer, through a piece of painter's tape to keep the surface from cracking.",
        "Floating shelf sag is usually the bracket rods bending or the screws pulling out of drywall. The bracket needs to go into studs.",
        "If you drilled into something wet, shut the water off at the main first and look. Better to cut a 6x6 inspection hole than to patch and find mold in a year.",
        "For garage cabinets, screw a French cleat into every stud with 3 inch structural screws and hang the cabinets on it. Easy to rearrange later.",
        "Check the TV's VESA pattern and weight before buying a mount. Plenty of cheap mounts are rated for the weight but not the screen size.",
        "Level the wall plate, not the TV. Start level and use the mount's small tilt adjustment only for fine-tuning.",
        "Use an in-wall power relocation kit instead of running the TV's power cord through the wall. The cord inside the wall is a code issue.",
        "For a mirror on plaster, use a French cleat or two D-rings into studs. Picture wire on a single hook is how mirrors end up on the floor.",
        "Hollow-wall anchors are rated mostly for shear. A shelf that cantilevers out puts real pull-out force on the top screws.",
    ),
    counters=(
        "People overbuild TV mounts. One stud with two good lags plus two snaptoggles is plenty for a 40 lb TV.",
        "Stud finders are fine if you calibrate them. People just don't read the instructions.",
    ),
    gems=(
        "Before drilling for a TV, push a finish nail through the drywall right behind where the TV will hang and angle it sideways. You can feel both stud edges exactly and the nail holes are hidden.",
        "Under 1940s plaster the studs are often true 2x4s of old-growth lumber. Lags hold insanely well, but pilot with 7/32 instead of 3/16 or you'll split them.",
    ),
)


STARTER = Topic(
    key="first_toolkit",
    subreddits=("HomeImprovement", "DIY", "Tools"),
    titles=(
        "New homeowner: what tools should I buy first?",
        "Building a starter tool kit on a $300 budget",
        "What's the one tool you wish you'd bought sooner?",
        "Essential hand tools nobody tells you about",
        "Oscillating multi-tool: worth it or gimmick?",
        "Gift ideas for a new homeowner who likes DIY",
        "Do I need a miter saw for baseboards or can I hand cut?",
        "Best inexpensive shop vac for DIY",
        "First apartment tool kit that fits in a closet",
    ),
    contexts=(
        "First house, first week. We already had a leaking toilet and a sticky door.",
        "My budget is about $300 right now and I'd rather buy good stuff once.",
        "We're replacing all the baseboards and trim in a 3 bedroom house ourselves.",
        "So far I own a cheap cordless drill, a hammer and a bag of random screwdrivers.",
    ),
    questions={
        "How old is the house?": ("Built in 1978.", "2012, so nothing too weird yet."),
        "What projects are on the list for the first year?": (
            "Baseboards, a fence repair and shelving in the garage.",
            "Painting every room and replacing the bathroom vanity.",
        ),
        "Do you have anywhere to store tools?": (
            "One-car garage with a wall I can use.",
            "A closet and a corner of the basement.",
        ),
    },
    asks=(
        "What would you buy first?",
        "What should I skip?",
        "What do you actually use every month?",
    ),
    facts=(
        "A drill/impact combo, a 25 ft tape, a 4 ft level, a stud finder, a utility knife, a multi-bit screwdriver and channel-lock pliers cover about 80% of homeowner jobs.",
        "An oscillating multi-tool is the tool I didn't know I needed: undercutting door jambs for flooring, cutting drywall, trimming shims, removing grout.",
        "Buy a shop vac before you need it. The first time the water heater leaks you'll be glad.",
        "A non-contact voltage tester is $20 and the most important safety tool in the house.",
        "Don't buy a giant 200-piece kit. Most of it is junk; buy individual tools as projects come up.",
        "A miter saw for baseboards is worth it. You'll use it on trim, shelves and every picture frame for the next decade.",
        "Get a 10 inch sliding miter saw if you can; 12 inch is overkill and heavy for homeowner use.",
        "A real toilet auger ($30) will save you an emergency plumber call. The plunger alone won't clear everything.",
        "For the multi-tool, the blades matter more than the brand. Buy bi-metal blades in a multi-pack.",
        "Headlamp. Seriously. Every under-sink job is easier.",
        "Get a 6-in-1 painter's tool. Scraping, opening cans, pulling nails, cleaning rollers: it's the most used $10 in my drawer.",
        "A 24 inch level and a 4 foot level are both worth having. The short one fits inside cabinets and window frames.",
        "Buy a decent set of hex keys and a small socket set. Furniture, appliances and faucets all need them eventually.",
        "A caulk gun with a smooth rod makes caulking ten times easier. The $3 ratchet ones are why people think they're bad at caulking.",
        "Put together a 'house kit': circuit map, water shutoff location, furnace filter size, paint colors. Your future self will thank you.",
    ),
    counters=(
        "Multi-tools are overrated. They're slow, they vibrate like crazy, and I've used mine twice.",
        "Skip the stud finder. A magnet and knocking works better.",
    ),
    gems=(
        "Keep a labeled bag of every spare screw, hinge and paint can that came with the house, and write the room and date on each paint lid with a sharpie. Touch-ups become a 5 minute job.",
        "Photograph every wall before it gets closed up, with a tape measure in the frame. I've found pipes and wires from a 3 year old phone photo more times than I can count.",
    ),
)
