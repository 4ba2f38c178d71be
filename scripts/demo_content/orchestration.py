# ruff: noqa: E501
"""Theme 4: data orchestration, Airflow vs Dagster vs Prefect (r/dataengineering, r/apacheairflow).

Sample text written for the demo. Topic years carry the pivot: 2023 threads lean Airflow, and
the 2025-2026 ones are mostly about having moved to Dagster.
"""

from __future__ import annotations

from demo_content.model import Theme, Topic

CHOOSING = Topic(
    key="choosing_orchestrator",
    subreddits=("dataengineering", "apacheairflow"),
    shift=True,
    titles=(
        "Airflow vs Dagster for a small data team in {year}?",
        "Is Airflow still the default orchestrator in {year}?",
        "What orchestrator does your company use in {year}?",
        "Starting a data platform from scratch: Airflow, Dagster or Prefect?",
        "Dagster's asset model: genuinely better or just different?",
        "Why does everyone here recommend Dagster now?",
        "Airflow vs Dagster vs Prefect: honest opinions from people who ran them in prod",
        "Which orchestrator is easiest to hire for?",
        "Convince me not to just use cron + dbt",
        "Our team of 3 is choosing an orchestrator, help",
        "Airflow or Dagster for a dbt-heavy stack?",
        "Orchestrator for ML pipelines: Airflow, Dagster or something else?",
    ),
    contexts=(
        "We're a 3-person data team at a ~200 person company; the stack is Fivetran, Snowflake and dbt.",
        "About 40 pipelines today, mostly daily batch, a few hourly.",
        "Our current setup is cron on an EC2 box and a lot of hope.",
        "I used Airflow at my last job and it was fine, but painful to test locally.",
        "Requirements, roughly:\n\n- ~60 pipelines, growing\n- dbt Core with ~400 models\n- backfills at least monthly\n- one person on call",
    ),
    questions={
        "How many pipelines are we talking about?": (
            "About 40 today, probably 100 within a year.",
            "Around 60, mostly daily.",
        ),
        "Is most of it dbt?": (
            "Yes, about 80% dbt models.",
            "Maybe half; the rest is Python ingestion.",
        ),
        "Who's on call?": ("Me. Just me.", "We rotate between three people."),
    },
    asks=(
        "Which would you pick today, and why?",
        "What do you regret about your choice?",
        "Anyone who's run two of these in production?",
        "What would you do in our shoes?",
    ),
    facts=(
        "Any of them beats cron. Pick the one your team can operate; the orchestrator isn't where most data projects fail.",
        "If your pipelines are mostly dbt, the dbt integration matters more than anything else. Look at how each tool models dbt tests and freshness.",
        "Prefect is the lightest to start with: decorate Python functions and go. It gets more complex once you need deployments and work pools.",
        "Managed options (Astronomer, MWAA, Dagster+, Prefect Cloud) remove most of the pain. Compare total cost including your own time.",
        "Run a two-week spike with your real pipelines before committing. Docs and demos make every tool look great.",
        "Think about who debugs it at 3am. The best orchestrator is the one your on-call person understands.",
        "If you're mostly dbt plus a few ingestion jobs, dbt Cloud's scheduler or a GitHub Actions cron may be enough for a while.",
        "Look at how each tool handles backfills and reruns. That's where most of the operational pain lives.",
    ),
    side_a=(
        "Airflow is boring, and that's a feature. Everyone knows it, there's a provider for everything, and every error message is one search away.",
        "Hiring matters. Put Airflow in a job post and you get ten times the qualified applicants you'd get for Dagster.",
        "With the TaskFlow API, Airflow 2 is much nicer than the Airflow people complain about. Most of the complaints are about 1.10.",
        "Airflow's provider ecosystem is unmatched: Snowflake, BigQuery, S3, Databricks, Slack. There's a maintained operator for whatever you need.",
        "We run 600 DAGs on Airflow with a 2-person platform team. It's not exciting, but it's fine.",
        "MWAA made Airflow a non-issue operationally for us. Upgrades lag behind, but nobody babysits a scheduler anymore.",
        "We evaluated Dagster this year and stayed on Airflow. It's a nicer dev experience, but not enough to justify rewriting 200 working DAGs.",
        "Airflow's community is the moat. Every weird edge case (DST shifts, sensor deadlocks, pool starvation) already has an answer somewhere.",
    ),
    side_b=(
        "Dagster's asset-based model changed how we think: we declare the tables we want, and lineage, freshness and backfills come with it.",
        "Local development in Dagster is night and day. `dagster dev` gives you the whole UI, and assets are plain Python functions you can unit test.",
        "dagster-dbt loads every dbt model as an asset, with its tests as asset checks. For a dbt-heavy stack nothing else comes close.",
        "We migrated 120 Airflow DAGs to Dagster last year. Onboarding new hires went from weeks to days because it's just typed Python.",
        "Partitioned assets and backfills in Dagster are so much saner than Airflow's `catchup` and `execution_date` confusion.",
        "Dagster's UI shows which assets are stale and why. That alone replaced half of our Slack alert noise.",
        "We moved to Dagster and haven't looked back. The asset graph is the documentation our stakeholders actually read.",
        "Dagster's typed config and resources made our pipelines testable. We went from zero tests to about 300 in a quarter.",
    ),
    counters=(
        "The Dagster hype on this sub is a bit much. For simple scheduled jobs its abstractions are overhead.",
        "Airflow 3 fixed most of the complaints people had. The gap is much smaller than Reddit thinks.",
        "Prefect deserves more love: a hybrid execution model, a great API, and no scheduler to babysit.",
    ),
    gems=(
        "If you're evaluating, port your single ugliest pipeline to each tool (the one with retries, backfills and a sensor), not a hello world. We did a 2-day spike per tool and the decision made itself.",
        "Whatever you pick, keep business logic in plain Python modules and the orchestrator layer thin (one file that wires functions into tasks or assets). Our Airflow to Dagster move took 3 weeks instead of 3 months because of that.",
    ),
    dissent=(
        "I'll be the dissent: we moved from Airflow to Dagster in 2024 and moved back in 2025. Dagster is great for asset-shaped work, but 70% of our jobs are operational (file drops, API syncs, reverse ETL) and modeling them as assets was awkward. Airflow 2.10 with TaskFlow, dataset scheduling and deferrable operators covered everything, with a much bigger talent pool.",
    ),
)

AIRFLOW_OPS = Topic(
    key="airflow_ops",
    subreddits=("apacheairflow", "dataengineering"),
    years=(2023, 2024),
    titles=(
        "Airflow scheduler slows to a crawl with 300 DAGs",
        "How do you set max_active_runs and concurrency for backfills?",
        "catchup=True just launched 900 DAG runs, how do I stop it",
        "Airflow pools vs max_active_tasks, which should I use?",
        "Deferrable operators: worth switching our sensors?",
        "KubernetesExecutor vs CeleryExecutor in {year}",
        "Airflow DAG parse time is 40 seconds, help",
        "Best way to pass data between Airflow tasks (XCom limits)?",
        "Airflow on MWAA: tips after a year in production",
        "Dynamic task mapping in Airflow 2.x, real-world patterns",
        "Airflow + dbt: one task per model or one task for the whole run?",
        "Why I still like Airflow after 5 years",
    ),
    contexts=(
        "Airflow 2.6 on Kubernetes (official Helm chart), CeleryExecutor, Postgres metadata DB.",
        "We have ~300 DAGs, most hourly, and the scheduler falls behind around the top of every hour.",
        "I started a backfill for a new DAG with `start_date` in 2021.",
        "Our S3KeySensors hold worker slots for hours waiting for vendor files.",
        "Airflow 2.7 on MWAA (mw1.medium), about 80 DAGs, dbt Core run through BashOperator.",
    ),
    questions={
        "What executor are you on?": ("CeleryExecutor with 4 workers.", "KubernetesExecutor."),
        "Which Airflow version?": ("2.6.3.", "2.7 on MWAA."),
        "Are you on MWAA or self-hosted?": (
            "Self-hosted on EKS with the official Helm chart.",
            "MWAA.",
        ),
    },
    asks=(
        "What settings should we tune?",
        "How do you handle this in prod?",
        "What's the sane default here?",
    ),
    facts=(
        "Set `catchup=False` on every DAG unless you explicitly want backfills. Then run backfills deliberately with `airflow dags backfill` and a date range.",
        "Use `max_active_runs=1` on DAGs that write to the same table, plus `depends_on_past=True` if order matters. Otherwise runs overwrite each other.",
        "Pools are for shared external resources (e.g. a 'snowflake' pool with 8 slots); `max_active_tasks` is per DAG. You usually want both.",
        "Top-level code in DAG files is the number one cause of slow parsing. No API calls, no DB queries, no heavy imports at module level.",
        "Check parse times with `airflow dags report`. Anything over a second per file needs fixing.",
        "Deferrable operators (`deferrable=True`) free the worker slot while waiting. Our sensor slot usage dropped 90% after switching S3KeySensor and ExternalTaskSensor.",
        "KubernetesExecutor gives isolation per task, but pod startup adds 20 to 60 seconds. For lots of short tasks, Celery is cheaper and faster.",
        "XCom is for small metadata (paths, ids, row counts). Pass data through S3/GCS and push the URI to XCom.",
        "Dynamic task mapping with `.expand()` works well up to a few hundred mapped tasks; beyond that, batch the inputs.",
        "For dbt, astronomer-cosmos renders each model as a task with its tests. For big projects, group by folder to keep the DAG readable.",
        "Raise `scheduler.parsing_processes` to your core count and `min_file_process_interval` to 60+ seconds if DAG files rarely change.",
        "On MWAA, size the environment class by DAG count, not just task volume. mw1.small fell over above ~50 DAGs for us.",
        "Airflow has been rock solid for us once we stopped putting logic in DAG files. The DAG wires tasks; everything else lives in a tested package.",
        "Keep DAG files thin and put the logic in a package you can unit test. The DAG only wires tasks together.",
        "Use `retries` with `retry_exponential_backoff=True` for flaky APIs, and `execution_timeout` on every task so a hung call doesn't hold a slot forever.",
        "Wire `on_failure_callback` to Slack with the log URL. Nobody checks the UI proactively.",
        "Run `airflow db clean` regularly. A bloated task_instance table slows down both the scheduler and the UI.",
    ),
    counters=(
        "Catchup isn't evil. For partitioned daily loads it's exactly what you want; people just don't set `start_date` properly.",
        "Celery is legacy at this point. KubernetesExecutor with a warm pod template is fine.",
    ),
    gems=(
        "If a backfill already launched hundreds of runs: pause the DAG first, then in Browse > DAG Runs filter state=queued and bulk-delete, set `max_active_runs=2`, and rerun with `airflow dags backfill -s 2024-01-01 -e 2024-01-31 my_dag`. Pausing first is the step people miss; otherwise the scheduler keeps queuing.",
        "Raise `AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT` and `AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT` together. If only the first is raised, big DAG files get killed mid-parse and silently vanish from the UI with nothing in the scheduler log.",
        "With cosmos and hundreds of dbt models, use `LoadMode.DBT_MANIFEST` and ship manifest.json in the image. Running `dbt ls` at parse time took our scheduler loop from 20 seconds to 4 minutes.",
    ),
    dissent=(
        "Against the consensus here: don't use deferrable operators unless you run the triggerer with HA and monitor it. Our triggerer pod OOMed and 200 deferred tasks sat there for 9 hours without failing or alerting. Reschedule-mode sensors (`mode='reschedule'`) gave us 80% of the slot savings without the new failure mode.",
    ),
)

MOVED = Topic(
    key="moved_to_dagster",
    subreddits=("dataengineering", "apacheairflow"),
    years=(2025, 2026),
    titles=(
        "We finally moved from Airflow to Dagster: retrospective after 6 months",
        "Migrating 200 Airflow DAGs to Dagster, lessons learned",
        "Anyone else move to Dagster this year? How did it go?",
        "Dagster assets for non-dbt jobs (API ingestion, ML): how do you model them?",
        "Dagster+ pricing vs running OSS Dagster on k8s",
        "Airflow to Dagster migration: do you run both in parallel?",
        "Left Airflow for Dagster, the one thing I miss",
        "Dagster sensors and schedules vs Airflow datasets after migrating",
        "How we convinced management to migrate off Airflow",
        "Dagster partitions finally made our backfills boring",
        "Moved our whole platform to Dagster in {year}, AMA",
    ),
    contexts=(
        "We ran Airflow 2.x on MWAA for four years, about 180 DAGs.",
        "Most of our pipelines are dbt plus ingestion from about 30 SaaS APIs.",
        "The trigger was a painful Airflow 3 upgrade plan and constant 'why is this task stuck' debugging.",
        "Team of 5 data engineers, Snowflake, dbt Core, and a long tail of Python ingestion jobs.",
    ),
    questions={
        "Did you use dagster-airlift for the migration?": (
            "Yes, for observing the Airflow DAGs during the transition. It made the parallel run much less scary.",
            "No, we did a hard cutover per pipeline.",
        ),
        "How long did the migration actually take?": (
            "Four months for about 150 DAGs, two engineers.",
            "Six weeks, but we only had 40 DAGs.",
        ),
        "Is that OSS Dagster or Dagster+?": ("Dagster+ Pro.", "OSS on our own Kubernetes cluster."),
    },
    asks=(
        "Anyone else gone through this?",
        "What would you do differently?",
        "What surprised you after the move?",
    ),
    facts=(
        "Run both in parallel during the migration. We used dagster-airlift to observe Airflow DAGs as assets in Dagster, then moved them over one by one.",
        "Model ingestion jobs as assets too: one asset per destination table, with the API sync as its materialization. It feels odd for a week, then it clicks.",
        "Start with dbt. dagster-dbt gives you an asset graph of the whole project in an afternoon, and it's the fastest win to show management.",
        "Declarative automation replaced most of our cron schedules: 'keep this table less than 2 hours stale' instead of 'run at :15'.",
        "Be careful with IO managers. Great for small data, but for warehouse tables keep the IO in SQL and return metadata only.",
        "Our Dagster+ bill is about 2x what we paid for MWAA, but platform work dropped from about one full-time engineer to a fifth of one.",
        "OSS Dagster on Kubernetes with the Helm chart has been stable. The webserver and daemon are light; run workers are the real cost.",
        "Code locations let each team deploy independently. That was impossible with our single Airflow repo.",
        "The migration took us 4 months for ~150 DAGs with 2 engineers. The long tail was custom operators and sensors.",
        "Asset checks replaced our separate Great Expectations DAGs. Checks run right after materialization and can block downstream assets.",
        "Six months in, nobody on the team wants to go back. Incidents are down and new pipelines take a day instead of a week.",
        "Write a short 'Dagster for Airflow people' doc on day one. Mapping DAG to job, task to op or asset, and sensor to sensor saves a lot of confusion.",
        "Migrate the noisiest, most painful DAGs first. Early visible wins kept management on board.",
        "Partitioned assets need partition-aware SQL. If a model ignores the partition window, every backfill silently redoes everything.",
    ),
    counters=(
        "Careful with the 'everything is an asset' mindset. We ended up with 900 assets and a graph nobody can read.",
        "The migration cost is real. If Airflow works for you, the grass isn't that much greener.",
    ),
    gems=(
        "During the migration, prefix asset keys with the old Airflow ids (`legacy/<dag_id>/<task_id>`) for the first month. Existing alert routing and runbooks keep making sense, and you rename once things settle.",
        "Tag assets that hit the same vendor API with `dagster/concurrency_key` and set a limit per key on the instance. It's Dagster's equivalent of Airflow pools, and without it a 365-partition backfill will DDoS your vendor.",
        "Put `BackfillPolicy.single_run()` on warehouse assets that can process a date range in one SQL statement. Our 2-year backfill became one run instead of 730.",
    ),
    dissent=(
        "Contrarian take from someone who did this migration: Dagster is nicer to develop in, but on-call got harder. Airflow's task retries and 'clear downstream' are muscle memory for every engineer; partial re-runs of asset graphs across partitions confused people for months. Budget for training, not just code.",
    ),
)

PREFECT = Topic(
    key="prefect",
    subreddits=("dataengineering",),
    titles=(
        "Prefect in production, anyone?",
        "Prefect vs Airflow for Python-heavy ML pipelines",
        "Prefect 3 upgrade experience?",
        "Is Prefect Cloud's free tier enough for a small team?",
        "Prefect work pools and workers finally make sense to me",
        "Why don't more people use Prefect?",
        "Prefect flows stuck in 'Pending'",
    ),
    contexts=(
        "Mostly Python scripts: pulling APIs, pandas transforms, loading to Postgres.",
        "There are two of us and no dedicated platform engineer.",
    ),
    questions={
        "Prefect Cloud or self-hosted server?": (
            "Cloud, free tier.",
            "Self-hosted server on a small VM.",
        ),
        "Which Prefect version?": ("3.x.", "Still on 2.x."),
        "How many flows?": ("About 30.", "Twelve, all small."),
    },
    asks=(
        "How's it going in production?",
        "Any pain points I should know about?",
    ),
    facts=(
        "Prefect is the easiest to adopt: add `@flow` and `@task` to existing scripts and you get retries, logging and a UI.",
        "Pending flows usually mean no worker is polling that work pool. Check that `prefect worker start --pool <name>` is running and the pool name matches the deployment.",
        "Prefect Cloud's free tier covered our ~30 flows; we only paid once we needed more users and RBAC.",
        "Prefect 3 removed a lot of the agent/infrastructure-block confusion from 2.x. The upgrade was mostly mechanical for us.",
        "Task caching with `cache_key_fn` and `cache_expiration` is great for expensive API pulls during development.",
        "Prefect is less opinionated than Dagster. Good for scripts, worse for lineage: you don't get a table-level view for free.",
        "Use work pool concurrency limits to protect shared databases; it's the Prefect equivalent of an Airflow pool.",
        "Blocks for credentials are convenient, but keep the secrets in your cloud secret manager and reference them.",
        "Prefect's UI is good for run history but light on lineage. Pair it with dbt docs or a catalog if you need that.",
    ),
    counters=(
        "Prefect changed its core concepts too often between 1, 2 and 3. We got tired of rewriting deployments.",
        "Prefect is great until you need fine-grained scheduling semantics. Then you end up rebuilding half of Airflow yourself.",
        "The hybrid model sounds nice but debugging a worker in someone's VPC from the Cloud UI was painful for us.",
    ),
    gems=(
        "Always set `timeout_seconds` on flows that call external APIs. Without it a hung HTTP call keeps the flow Running forever, and a concurrency limit then blocks every later scheduled run.",
    ),
)

AIRFLOW3 = Topic(
    key="airflow3",
    subreddits=("apacheairflow", "dataengineering"),
    years=(2025, 2026),
    titles=(
        "Airflow 3.0 upgrade: what broke for you?",
        "Airflow 3 DAG versioning, first impressions",
        "Is Airflow 3 enough to keep us from moving to Dagster?",
        "Airflow 3 Task SDK and no direct DB access: migration pain",
        "New Airflow 3 UI: better or worse?",
        "Assets in Airflow 3 vs Dagster assets",
        "Should we upgrade to Airflow 3 now or wait?",
    ),
    contexts=(
        "We're on Airflow 2.10 with ~250 DAGs and a lot of custom operators.",
        "Several of our DAGs query the metadata DB directly through the ORM.",
    ),
    questions={
        "Which 3.x version did you land on?": (
            "3.0.2, after waiting for the first patches.",
            "3.1.",
        ),
        "How many custom operators do you have?": (
            "About 25, half of them wrappers around hooks.",
            "Three.",
        ),
        "How big is your metadata DB?": ("Around 90GB before cleanup.", "Small, maybe 5GB."),
    },
    asks=(
        "How was your upgrade?",
        "Worth it yet?",
    ),
    facts=(
        "Run `ruff check --select AIR3` (the Airflow rules) on your DAG repo before upgrading. It flags most removed imports and renamed parameters.",
        "Tasks can no longer talk to the metadata DB directly in Airflow 3. Anything using a `session` or `DagRun.find` inside a task has to go through the REST API or the Task SDK.",
        "`schedule_interval` and `timetable` are gone, it's just `schedule=` now, and `execution_date` references need to become `logical_date`.",
        "DAG versioning is the best new feature: the UI shows the DAG as it was for each run, which makes debugging old runs much easier.",
        "Datasets became Assets in Airflow 3, and the `@asset` decorator looks a lot like Dagster, though it's still task-centric underneath.",
        "The new React UI is faster, but a few plugins we relied on don't work yet.",
        "We waited for the first patch releases before upgrading. It took 3 weeks for 180 DAGs, mostly import changes.",
        "Test the upgrade on a copy of the metadata DB. The schema migration on a big database is the slowest part of the whole upgrade.",
        "Custom operators that import Airflow internals are the main breakage. The public SDK imports are stable.",
        "Airflow 3's scheduler is noticeably faster for us with the same DAG count.",
    ),
    counters=(
        "Airflow 3 is Airflow catching up to Dagster's ideas three years late. If you're rewriting anyway, rewrite to Dagster.",
        "Wait for a few minor releases. The first major release of anything is for early adopters.",
    ),
    gems=(
        "Before upgrading, run `airflow db clean --clean-before-timestamp` on the 2.x database to trim old task instances and XComs. Our migration step on a 90GB metadata DB went from timing out after 3 hours to 12 minutes.",
    ),
)

HOSTING = Topic(
    key="managed_costs",
    subreddits=("dataengineering", "apacheairflow"),
    titles=(
        "MWAA vs Astronomer vs self-hosted Airflow: what does it really cost?",
        "Dagster+ vs Astronomer pricing for ~100 pipelines",
        "Our MWAA bill is $1,400/month for 40 DAGs, is that normal?",
        "Self-hosting Airflow on k8s: how many engineers does it take?",
        "Is Prefect Cloud cheaper than running Airflow ourselves?",
        "Cheapest way to run an orchestrator for a startup",
    ),
    contexts=(
        "Small startup, about 40 pipelines, very budget-conscious.",
        "Finance asked me to justify the orchestration line item.",
    ),
    questions={
        "Which environment class?": ("mw1.medium.", "mw1.small, which is probably too small."),
        "How many DAGs and runs per day?": (
            "40 DAGs, about 300 runs a day.",
            "120 DAGs, a few thousand task runs a day.",
        ),
        "Does that include log storage?": (
            "No, CloudWatch is extra on top.",
            "Yes, that's the all-in number.",
        ),
    },
    asks=(
        "What do you pay?",
        "What would you do?",
    ),
    facts=(
        "MWAA's smallest environment is a few hundred dollars a month before workers. Not cheap, but you stop getting paged for scheduler issues.",
        "Self-hosted Airflow on k8s is cheap in infrastructure and expensive in people. Budget a few days a month for upgrades and weird scheduler issues.",
        "For a startup, Dagster OSS or Prefect on a single VM with Docker Compose is totally fine up to dozens of pipelines.",
        "Astronomer's hosted Airflow adds a lot: fast upgrades, good observability, cosmos support. Pricey, but it saves headcount.",
        "MWAA can't be paused, so we delete and recreate the dev environment from Terraform every night. Cut the bill by about 30%.",
        "Count your runs. Dagster+ bills on credits per materialization/step, and a chatty pipeline with thousands of tiny assets gets expensive fast.",
        "Track cost per pipeline, not just the total. We found 3 DAGs eating 40% of our worker hours.",
        "Use spot instances for Kubernetes run workers; orchestrators retry well enough that interruptions rarely matter.",
        "Don't forget log storage. CloudWatch logs from a chatty MWAA environment were 20% of our bill.",
    ),
    counters=(
        "Managed orchestration is a tax on teams that never learned to run a Postgres and a scheduler. Two VMs and Docker Compose have served us for years.",
        "Self-hosting is only cheap if your time is free. One bad upgrade weekend costs more than a year of the managed plan.",
    ),
    gems=(
        "On MWAA, set `celery.worker_autoscale` to something like `8,4` for memory-heavy tasks on mw1.small. The default packs too many tasks per worker and you get random SIGKILLs that look like code bugs.",
    ),
)

THEME = Theme(
    key="orchestration",
    topics=(CHOOSING, AIRFLOW_OPS, MOVED, PREFECT, AIRFLOW3, HOSTING),
    questions={
        "How many people are on your data team?": ("Four.", "Two, plus an analyst."),
        "What made you pick that over the alternatives?": (
            "Honestly, the team already knew it.",
            "The dbt integration.",
        ),
        "What does on-call look like now?": (
            "A few pages a month, mostly vendor APIs.",
            "Quieter than before, but still one person.",
        ),
        "What's the warehouse?": ("Snowflake.", "BigQuery."),
        "Would you choose the same again today?": (
            "Yes.",
            "Probably, but I'd look harder at the alternatives.",
        ),
    },
    frames=(
        "Data engineer, {n} years in.",
        "I run the data platform at a mid-size company, {n} years of orchestrators in prod.",
        "Been on call for data pipelines for {n} years.",
        "Analytics engineer, {n} years, mostly dbt.",
    ),
    name_parts=(
        "dag",
        "backfill",
        "etl",
        "warehouse",
        "parquet",
        "lakehouse",
        "sensor",
        "cron",
        "upsert",
        "schema",
        "snowflake",
        "partition",
        "lineage",
        "airflow",
        "idempotent",
        "xcom",
        "dbt",
    ),
    flairs={
        "dataengineering": ("Discussion", "Help", "Career", "Blog"),
        "apacheairflow": (),
    },
)
