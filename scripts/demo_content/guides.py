# ruff: noqa: E501
"""Long, markdown-heavy posts and the non-English threads. Sample text written for the demo."""

from __future__ import annotations

from demo_content.model import Special

AIRFLOW_CHECKLIST = """After running Airflow in production since 2019 (1.10 first, don't remind me), here's the checklist we apply to every new DAG. Nothing fancy, but it has saved us a lot of 3am pages.

## DAG defaults

```python
default_args = {
    "retries": 3,
    "retry_delay": timedelta(minutes=5),
    "retry_exponential_backoff": True,
    "execution_timeout": timedelta(hours=2),
}

with DAG(
    dag_id="orders_daily",
    schedule="@daily",
    start_date=datetime(2023, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args=default_args,
) as dag:
    extract >> transform >> load
```

## The rules

1. **`catchup=False` unless you mean it.** Backfills are run by hand with `airflow dags backfill`.
2. **`max_active_runs=1`** for anything that writes to a table another run also writes.
3. **No top-level code.** Imports of pandas & friends go inside the task.
4. **Pools for every external system** (`snowflake: 8`, `vendor_api: 2`).
5. **`execution_timeout` on every task.** A hung task is worse than a failed one.
6. **Sensors in `mode="reschedule"`** or deferrable. Never poke mode for more than a few minutes.

## Monitoring

- SLA misses go to Slack via `sla_miss_callback`
- `airflow dags report` runs in CI and fails the build if any file takes > 1s to parse

More detail in the [official best practices](https://airflow.apache.org/docs/apache-airflow/stable/best-practices.html). Happy to answer questions."""

CHUNKING_CHEATSHEET = """We've shipped RAG over about a dozen corpora for clients (HR policies, product docs, support tickets, contracts). These are our starting defaults before we tune anything on an eval set:

| Content | Chunking | Size | Overlap |
|---|---|---|---|
| Policies / handbooks | by heading, then tokens | 400 tokens | 50 |
| Product docs (markdown) | by header (H2/H3) | 300-600 tokens | 0 |
| Support tickets | one ticket = one chunk | <= 800 tokens | 0 |
| Contracts | by clause | 1 clause | 0 |
| Code | by function/class (tree-sitter) | 1 symbol | 0 |

**Always:**

- prepend `title > section > subsection` to the chunk text before embedding
- keep `doc_id`, `chunk_id` and character offsets for citations
- retrieve top 20, rerank with bge-reranker-v2-m3, keep 5

**Never:**

- split a table mid-row
- trust a chunking change without re-running the eval (we use ~150 questions per corpus)

If you only do one thing: build the eval set first. Everything else is guessing."""

PLAUD_OBSIDIAN = """I've been using a Plaud Note as my voice recorder for every meeting since last spring. A few people asked how I get the transcripts into Obsidian without it turning into a junk drawer, so here's the whole setup.

**Hardware:** Plaud Note on the back of my phone, slider on call mode for phone calls. I charge it every Sunday; roughly 30 hours of recording per charge covers a week of meetings.

**Flow:**

1. Record. Say the meeting name and agenda in the first 30 seconds.
2. After the meeting, sync and open the summary in the app (or on plaud.ai).
3. Regenerate with my custom template (below).
4. Export as markdown to `Meetings/YYYY-MM-DD <title>.md`.
5. Move action items to Todoist right away. Anything not moved within 24 hours gets deleted.

**The template prompt:**

```
Summarize this meeting as:
## Decisions
## Action items (owner, due date)
## Open questions
## Quotes worth keeping (verbatim, max 3)
```

**Dataview query for a person's page:**

```
LIST FROM "Meetings" WHERE contains(file.text, this.file.name) SORT file.name DESC
```

Cost: the device was $159 and I'm on the Pro plan. Worth it for me at 25+ meetings a week; for a few meetings a week the free tier is fine.

&#x200B;

Edit: people asked about consent. I always say I'm recording and why. Nobody has objected in a year."""

PLASTER_TV = """Plaster and lath, studs 16" on center, and of course the center of the wall landed between two of them. Took me two evenings; here's what worked:

1. **Found the studs with a magnet**, not the stud finder. Marked every nail with painter's tape.
2. **Confirmed with a finish nail** through the plaster where the mount would cover the hole.
3. **Taped the drill spots** and drilled the plaster with a 3/16 masonry bit, *no hammer mode*, low speed.
4. **Switched to a 7/32 wood bit** for the stud itself. Old-growth 2x4s are hard and split with 3/16 pilots for 5/16 lags.
5. Used a mount with a **sliding wall plate** so the TV sits centered even though the studs aren't.
6. 4 x 5/16" x 3" lags, two per stud, driven with the impact on its lowest mode and snugged by hand with a ratchet.

TV is ~62 lbs. It's been up 8 months: zero sag, zero cracks.

What I'd do differently: buy a cheap borescope first. I spent 20 minutes worrying about a "wire" that turned out to be an old picture-rail nail."""

DAGSTER_NUMBERS = """We finished moving off Airflow (MWAA, 2.7) last month. Numbers, since these threads are usually vibes:

- **180 DAGs** became **~1,100 assets** in 6 code locations
- **2 engineers**, 4 months, both systems running in parallel via `dagster-airlift` the whole time
- **Pages per month:** 14 -> 3 (mostly vendor API outages now)
- **Time to add a new source:** about a week -> 1-2 days
- **Infra cost:** MWAA ~$1,900/mo -> Dagster+ plus our own k8s run workers ~$2,300/mo

What worked:

1. Migrating dbt first (`dagster-dbt`); it was 60% of the DAGs by count.
2. One asset per destination table for ingestion.
3. `dagster/concurrency_key` tags instead of Airflow pools.

What hurt:

- Custom sensors and the long tail of BashOperator scripts.
- Retraining on-call: "clear downstream" muscle memory doesn't map 1:1.

Would do it again. In 2023 I argued *against* this migration in this very sub, so take that as you will."""

GUIDES = (
    Special(
        "guide",
        "apacheairflow",
        "[Guide] Our Airflow production checklist after 4 years and 400 DAGs",
        AIRFLOW_CHECKLIST,
        2023,
        topic="airflow_ops",
        extra_comments=14,
    ),
    Special(
        "guide",
        "Rag",
        "[Guide] The chunking cheat sheet we use for every new RAG project",
        CHUNKING_CHEATSHEET,
        2024,
        topic="rag_chunking",
        extra_comments=16,
    ),
    Special(
        "guide",
        "productivity",
        "My complete Plaud Note + Obsidian setup (templates included)",
        PLAUD_OBSIDIAN,
        2025,
        topic="workflow",
        extra_comments=18,
    ),
    Special(
        "guide",
        "DIY",
        'How I mounted a 75" TV on 1940s plaster walls (step by step)',
        PLASTER_TV,
        2024,
        topic="mounting_heavy",
        extra_comments=12,
    ),
    Special(
        "guide",
        "dataengineering",
        "Airflow -> Dagster migration, by the numbers (180 DAGs, 4 months)",
        DAGSTER_NUMBERS,
        2026,
        topic="moved_to_dagster",
        extra_comments=20,
    ),
)

NON_ENGLISH = (
    Special(
        "non_english",
        "LocalLLaMA",
        "Какую локальную модель выбрать для кода на одной RTX 3090?",
        "Всем привет. Есть RTX 3090 (24 ГБ) и 64 ГБ оперативки. Хочу локального помощника для Python и немного Go, без отправки кода наружу: на работе это запрещено. Пробовал Qwen2.5-Coder 7B через Ollama — быстро, но на больших функциях путается. Стоит ли брать 32B в Q4_K_M или лучше 14B с длинным контекстом? Какие настройки llama.cpp используете?",
        2025,
        comments=(
            "Сижу на Qwen2.5-Coder-32B Q4_K_M на такой же 3090. Около 30 токенов/с, контекст 16k влезает. Для автодополнения отдельно держу 1.5B — 32B для этого слишком медленная.",
            "Обязательно увеличь `num_ctx` в Modelfile: у Ollama по умолчанию маленький контекст, и длинные промпты молча обрезаются.",
        ),
        replies=(
            "А KV-кэш в q8_0 пробовал? С `--cache-type-k q8_0 --cache-type-v q8_0` у меня влезло 32k контекста.",
            "Пробовал, разницы в качестве не заметил, а памяти уходит заметно меньше.",
        ),
    ),
    Special(
        "non_english",
        "dataengineering",
        "Airflow или Dagster в 2025 году — что выбрать небольшой команде?",
        "Нас трое, стек: Postgres, dbt, около 50 пайплайнов, сейчас всё крутится на cron. Раньше работал с Airflow — нормально, но локально тестировать больно. Коллеги советуют Dagster из-за ассетов и интеграции с dbt. Кто переезжал — расскажите, стоило ли оно того?",
        2025,
        comments=(
            "Переехали с Airflow на Dagster в прошлом году, около 120 DAG-ов. dagster-dbt — главная причина: весь проект dbt сразу виден как граф ассетов. Назад не хочется.",
            "Для трёх человек я бы не усложнял. Airflow знают все, нанимать проще. Но если основная нагрузка — dbt, то Dagster действительно удобнее.",
        ),
        replies=(
            "Ещё плюс Dagster: бэкфиллы по партициям намного понятнее, чем catchup в Airflow.",
        ),
    ),
    Special(
        "non_english",
        "HomeImprovement",
        "Akkuschrauber-Frage: DeWalt oder Makita für Altbau mit Betondecken?",
        "Hallo zusammen, wir haben eine Altbauwohnung (Baujahr 1962) mit Betondecken gekauft und müssen Lampen, Vorhangschienen und Regale montieren. Lohnt sich ein Akku-Bohrhammer mit SDS-plus oder reicht eine Schlagbohrmaschine? Budget ca. 300 €.",
        2024,
        comments=(
            "Für Betondecken unbedingt SDS-plus. Mit der Schlagbohrmaschine stehst du mit den Armen über dem Kopf ewig da. Ein Akku-Bohrhammer und gute Bohrer, dann ist jedes Loch in 20 Sekunden fertig.",
            "Makita und DeWalt nehmen sich nicht viel. Schau lieber, welches Akkusystem du langfristig willst, die Akkus sind das Teure.",
        ),
        replies=(
            "Und Staubabsaugung nicht vergessen, Betonstaub von der Decke ist kein Spaß. Ein Zettel mit Klebeband als Tüte unter dem Bohrloch hilft schon.",
        ),
    ),
    Special(
        "non_english",
        "gadgets",
        "Plaud Note auf Deutsch – wie gut ist die Transkription?",
        "Ich überlege, mir den Plaud Note für Kundentermine zu kaufen. Die meisten Meetings sind auf Deutsch, oft mit englischen Fachbegriffen gemischt. Wie gut kommt die Transkription damit klar? Und wie sieht es mit dem Datenschutz (DSGVO) aus?",
        2025,
        comments=(
            "Nutze ihn seit einem halben Jahr für Meetings auf Deutsch. Die Transkription ist gut, englische Fachbegriffe werden meistens richtig erkannt. Die Sprecherzuordnung ist bei vielen Leuten am Tisch schwächer.",
            "Zum Datenschutz: vorher alle Teilnehmer fragen. Für sensible Termine exportiere ich das Audio und transkribiere lokal mit Whisper.",
        ),
    ),
    Special(
        "non_english",
        "productivity",
        "¿Vale la pena la grabadora Plaud Note para clases en la universidad?",
        "Estudio Derecho y las clases duran casi dos horas. Tomo apuntes a mano, pero siempre se me escapa algo. ¿Alguien usa el Plaud Note u otra grabadora de voz parecida en clase? ¿Qué tal funciona en español?",
        2025,
        comments=(
            "Lo uso en clases de Medicina. En español transcribe bastante bien, aunque los términos técnicos a veces salen mal. Me siento en las primeras filas y el audio queda claro.",
            "Antes de grabar, pregunta al profesor. La mayoría no tiene problema si es para uso personal.",
        ),
        replies=(
            "Yo exporto la transcripción y le pido a un LLM que me haga preguntas tipo examen. Me funciona mejor que releer.",
        ),
    ),
    Special(
        "non_english",
        "Rag",
        "¿Qué tamaño de chunk usan para documentos legales en español?",
        "Estoy montando un RAG sobre contratos y normativa interna en español. Uso chunks de 1000 caracteres con 200 de solapamiento y embeddings multilingües, pero recupera párrafos que no tienen nada que ver. ¿Qué les funciona a ustedes?",
        2024,
        comments=(
            "Divide por estructura: cláusulas, artículos y apartados. En textos legales cada artículo es una unidad natural. Añade el título del documento y el número de artículo a cada chunk.",
            "Prueba bge-m3 para español; nos fue mejor que otros modelos en documentos legales. Y pon un reranker después, sin duda.",
        ),
    ),
)
