"""Each doctor check against a real local server or store: what it finds when it works, and
the failure line (with its fix) when it does not."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError
from crowdsift.engines.embedding import Embedder, HashingEmbedder
from crowdsift.service.doctor import Check, CheckSpec, DoctorContext, assess, run_doctor
from crowdsift.service.doctor.local import check_archive, check_embedding
from crowdsift.service.doctor.remote import check_arctic_shift, check_llm, check_reddit
from crowdsift.service.doctor.stores import check_chroma, check_database, check_redis, safe_url
from crowdsift.sources.archive.demo import ensure_demo_archive
from tests.service.doctor.conftest import LLM_KEY, REDDIT_SECRET
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.openai_server import ChatCompletionsServer
from tests.support.reddit_server import RedditProtocolServer

REDIS_URL = "redis://127.0.0.1:6379/0"


def _ctx(tmp_path: Path, **values: object) -> DoctorContext:
    settings = Settings(home=tmp_path / "home", **values)  # type: ignore[arg-type]
    return DoctorContext(settings, embedder_factory=lambda _: HashingEmbedder())


def _reddit(server: RedditProtocolServer, secret: str = REDDIT_SECRET) -> dict[str, object]:
    return {
        "reddit_client_id": "doctor-client",
        "reddit_client_secret": secret,
        "reddit_auth_url": server.auth_url,
        "reddit_api_base_url": server.base_url,
    }


# --- Reddit credentials: a token request ---------------------------------------------------


def test_reddit_credentials_get_a_token(
    tmp_path: Path, reddit_server: RedditProtocolServer
) -> None:
    check = check_reddit(_ctx(tmp_path, **_reddit(reddit_server)))
    assert check.status == "ok", check
    assert "client_credentials grant" in check.detail and REDDIT_SECRET not in check.detail
    token_requests = [r for r in reddit_server.requests if r.path == "/api/v1/access_token"]
    assert len(token_requests) == 1
    assert len(reddit_server.requests) == 1  # the token only: no API request is spent


def test_a_wrong_reddit_secret_fails_with_what_to_check(
    tmp_path: Path, reddit_server: RedditProtocolServer
) -> None:
    check = check_reddit(_ctx(tmp_path, **_reddit(reddit_server, "wrong-secret-0123456789")))
    assert check.status == "fail"
    assert "401" in check.detail
    assert "REDDIT_CLIENT_ID" in check.fix and "wrong-secret" not in check.detail + check.fix


def test_an_unreachable_token_endpoint_fails(tmp_path: Path, dead_port: int) -> None:
    values = {
        "reddit_client_id": "doctor-client",
        "reddit_client_secret": REDDIT_SECRET,
        "reddit_auth_url": f"http://127.0.0.1:{dead_port}/api/v1/access_token",
    }
    check = check_reddit(_ctx(tmp_path, **values))
    assert check.status == "fail" and "cannot reach" in check.detail
    assert "REDDIT_AUTH_URL" in check.fix


def test_reddit_without_credentials_is_skipped(tmp_path: Path) -> None:
    check = check_reddit(_ctx(tmp_path))
    assert check.status == "skipped" and "REDDIT_CLIENT_ID" in check.fix


# --- Arctic Shift: one cheap request -------------------------------------------------------


def test_arctic_shift_answers(tmp_path: Path, arctic_server: ArcticShiftServer) -> None:
    check = check_arctic_shift(_ctx(tmp_path, arctic_shift_base_url=arctic_server.base_url))
    assert check.status == "ok" and arctic_server.base_url in check.detail
    assert len(arctic_server.requests) == 1


def test_arctic_shift_unreachable_fails_with_its_fix(tmp_path: Path, dead_port: int) -> None:
    check = check_arctic_shift(
        _ctx(tmp_path, arctic_shift_base_url=f"http://127.0.0.1:{dead_port}")
    )
    assert check.status == "fail"
    assert "ARCTIC_SHIFT_BASE_URL" in check.fix and "archive import" in check.fix


# --- the LLM endpoint: a one-token request, only when configured -----------------------------


def test_the_llm_endpoint_answers_one_token(
    tmp_path: Path, llm_server: ChatCompletionsServer
) -> None:
    ctx = _ctx(tmp_path, llm_base_url=llm_server.base_url, llm_api_key=LLM_KEY)
    check = check_llm(ctx)
    assert check.status == "ok", check
    assert LLM_KEY not in check.detail and LLM_KEY[-4:] in check.detail  # masked, recognisable
    (request,) = llm_server.requests
    assert request["max_tokens"] == 1 and request["model"] == ctx.settings.model_for("plan")


def test_a_refused_llm_key_fails_naming_the_key_setting(
    tmp_path: Path, llm_server: ChatCompletionsServer
) -> None:
    wrong = "sk-wrong-key-0123456789abcdef"
    check = check_llm(_ctx(tmp_path, llm_base_url=llm_server.base_url, llm_api_key=wrong))
    assert check.status == "fail" and "401" in check.detail
    assert "CROWDSIFT_LLM_API_KEY" in check.fix and wrong not in check.detail


def test_an_unreachable_llm_endpoint_fails(tmp_path: Path, dead_port: int) -> None:
    ctx = _ctx(tmp_path, llm_base_url=f"http://127.0.0.1:{dead_port}/v1", llm_api_key=LLM_KEY)
    check = check_llm(ctx)
    assert check.status == "fail" and "cannot reach" in check.detail
    assert "CROWDSIFT_LLM_BASE_URL" in check.fix


def test_the_llm_check_is_skipped_without_a_key(tmp_path: Path) -> None:
    assert check_llm(_ctx(tmp_path)).status == "skipped"


# --- the user's archive --------------------------------------------------------------------


def test_an_imported_archive_is_described(tmp_path: Path, user_archive: Path) -> None:
    check = check_archive(_ctx(tmp_path, archive_path=user_archive))
    assert check.status == "ok", check
    assert str(user_archive) in check.detail and "kB" in check.detail
    assert "3 posts and 1 comments in 2 subreddits (headphones, audiophile)" in check.detail
    assert "last import" in check.detail


def test_no_archive_is_a_warning_naming_the_import_command(tmp_path: Path) -> None:
    check = check_archive(_ctx(tmp_path))
    assert check.status == "warn" and "crowdsift archive import" in check.fix


def test_the_sample_archive_is_not_taken_for_the_users_own(tmp_path: Path) -> None:
    sample = ensure_demo_archive(tmp_path / "demo")
    check = check_archive(_ctx(tmp_path, archive_path=sample))
    assert check.status == "warn" and "SAMPLE DATA" in check.detail


def test_an_unreadable_archive_fails(tmp_path: Path) -> None:
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database at all" * 100)
    check = check_archive(_ctx(tmp_path, archive_path=broken))
    assert check.status == "fail" and "re-import" in check.fix


# --- the embedding model --------------------------------------------------------------------


def test_the_embedding_check_reports_the_dimension(tmp_path: Path) -> None:
    check = check_embedding(_ctx(tmp_path))
    assert check.status == "ok" and "384 dimensions" in check.detail


def test_an_embedding_model_that_does_not_load_fails(tmp_path: Path) -> None:
    def broken(_: Settings) -> Embedder:
        raise ConfigError("cannot load the embedding model /nowhere: no such directory")

    ctx = DoctorContext(Settings(home=tmp_path), embedder_factory=broken)
    check = check_embedding(ctx)
    assert check.status == "fail" and "/nowhere" in check.detail and "make install" in check.fix


# --- the stores in use ----------------------------------------------------------------------


def test_sqlite_is_checked_where_it_will_live(tmp_path: Path) -> None:
    check = check_database(_ctx(tmp_path))
    assert check.status == "ok" and "created on first use" in check.detail


def test_postgresql_answers(tmp_path: Path, postgres_url: str) -> None:
    check = check_database(_ctx(tmp_path, database_url=postgres_url))
    assert check.status == "ok" and check.detail.startswith("postgresql ")


def test_an_unreachable_postgresql_fails_without_its_password(
    tmp_path: Path, dead_port: int
) -> None:
    url = f"postgresql+psycopg://crowdsift:pg-password-123@127.0.0.1:{dead_port}/test"
    check = check_database(_ctx(tmp_path, database_url=url))
    assert check.status == "fail" and "CROWDSIFT_DATABASE_URL" in check.fix
    assert "pg-password-123" not in check.detail and "crowdsift:***@" in check.detail


def test_redis_answers_ping(tmp_path: Path) -> None:
    check = check_redis(_ctx(tmp_path, cache_url=REDIS_URL, broker_url=REDIS_URL))
    assert check is not None and check.status == "ok" and "(cache, broker)" in check.detail


def test_redis_is_not_a_line_when_no_setting_uses_it(tmp_path: Path) -> None:
    assert check_redis(_ctx(tmp_path)) is None


def test_an_unreachable_redis_cache_fails_and_a_broker_only_warns(
    tmp_path: Path, dead_port: int
) -> None:
    url = f"redis://:redis-pass-99@127.0.0.1:{dead_port}/0"
    cache = check_redis(_ctx(tmp_path, cache_url=url))
    broker = check_redis(_ctx(tmp_path, broker_url=url))
    assert cache is not None and cache.status == "fail" and "redis-pass-99" not in cache.detail
    assert broker is not None and broker.status == "warn"


def test_local_chroma_and_an_unreachable_chroma_server(tmp_path: Path, dead_port: int) -> None:
    assert check_chroma(_ctx(tmp_path)).status == "ok"
    server = check_chroma(_ctx(tmp_path, chroma_url=f"http://127.0.0.1:{dead_port}"))
    assert server.status == "warn" and "CROWDSIFT_CHROMA_URL" in server.fix


def test_safe_url_hides_passwords_in_both_places() -> None:
    assert safe_url("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"
    assert safe_url("redis://h:6379/0?password=pw&db=1") == "redis://h:6379/0?password=***&db=1"
    assert safe_url("redis://h:6379/0") == "redis://h:6379/0"


# --- the runner: independent checks, bounded time, judged together, secrets masked ----------


def test_a_hung_check_is_a_failure_after_its_budget_and_the_others_still_report(
    tmp_path: Path,
) -> None:
    release = threading.Event()

    def hangs(_: DoctorContext) -> Check:
        release.wait(30)
        return Check(name="hangs", status="ok", detail="too late")

    def raises(_: DoctorContext) -> Check:
        raise RuntimeError("boom")

    def works(_: DoctorContext) -> Check:
        return Check(name="works", status="ok", detail="fine")

    specs = [
        CheckSpec("hangs", hangs, 0.2, "look at the hanging thing"),
        CheckSpec("raises", raises, 5.0, "look at the broken thing"),
        CheckSpec("works", works, 5.0, ""),
    ]
    try:
        report = run_doctor(_ctx(tmp_path), specs)
    finally:
        release.set()
    hung, broken, fine = report.checks
    assert (hung.status, hung.detail, hung.fix) == (
        "fail", "no answer within 0.2 s", "look at the hanging thing",
    )  # fmt: skip
    assert broken.status == "fail" and "RuntimeError: boom" in broken.detail
    assert fine.status == "ok" and not report.ok


def test_a_secret_in_any_message_is_masked(tmp_path: Path) -> None:
    def leaks(ctx: DoctorContext) -> Check:
        key = ctx.settings.llm_api_key.get_secret_value() if ctx.settings.llm_api_key else ""
        return Check(name="leaks", status="fail", detail=f"server said: bad key {key}", fix=key)

    report = run_doctor(_ctx(tmp_path, llm_api_key=LLM_KEY), [CheckSpec("leaks", leaks, 5.0, "")])
    assert LLM_KEY not in report.model_dump_json()


def test_a_failing_source_only_warns_while_another_source_works() -> None:
    checks = [
        Check(name="reddit-api", status="skipped", detail="no keys"),
        Check(name="arctic-shift", status="fail", detail="down", fix="wait"),
        Check(name="archive", status="ok", detail="mine"),
    ]
    judged = assess(checks)
    assert judged[1].status == "warn" and "auto uses archive instead" in judged[1].detail
    alone = assess([checks[0], checks[1], Check(name="archive", status="warn", detail="none")])
    assert alone[1].status == "fail"


def test_an_injected_transport_carries_every_request(tmp_path: Path) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"data": []})

    settings = Settings(home=tmp_path, arctic_shift_base_url="http://arctic.invalid")
    ctx = DoctorContext(settings, transport=httpx.MockTransport(handler))
    assert check_arctic_shift(ctx).status == "ok"
    assert seen and seen[0].startswith("http://arctic.invalid/api/posts/ids")
