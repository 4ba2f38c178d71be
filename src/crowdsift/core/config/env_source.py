"""Settings read from the environment by their documented, upper-case names only.

Every setting also accepts its Python name as an alias (``Settings(home=...)`` in code and
tests). pydantic-settings, matching case-insensitively, would read those aliases from the
environment too, and some are variables every machine has: ``HOME`` became ``CROWDSIFT_HOME``
(so crowdsift wrote its database, salt and archives straight into the user's home directory),
and ``SOURCE``, ``ENGINE``, ``API_KEY`` or ``DATABASE_URL`` set for another program would have
changed crowdsift's source, engine, service key or store. This source keeps the documented
names (``CROWDSIFT_HOME``, ``REDDIT_CLIENT_ID``, ``MAP_MAX_PARALLEL``: written upper-case) and
drops the lower-case Python aliases, which stay valid in constructors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
)


class DocumentedEnvSource(EnvSettingsSource):
    """The environment, through each field's upper-case alias names only."""

    def _extract_field_info(
        self, field: FieldInfo, field_name: str, model_config: Mapping[str, Any] | None = None
    ) -> list[tuple[str, str, bool]]:
        found = super()._extract_field_info(field, field_name, model_config)
        if not isinstance(field.validation_alias, AliasChoices):
            return found
        return [entry for entry in found if entry[0].isupper()]

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """The first documented variable that is set; a field with none (a section, set
        through its own variables) reads nothing here."""
        for field_key, env_name, value_is_complex in self._extract_field_info(field, field_name):
            value = self.env_vars.get(env_name)
            if value is not None:
                return value, field_key, value_is_complex
        return None, field_name, False


class DocumentedSettings(BaseSettings):
    """Base of every settings class: constructor values first, then the environment through
    ``DocumentedEnvSource`` (upper-case names only), then .env and secrets files, as before."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,  # noqa: ARG003  # replaced, see the class
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            DocumentedEnvSource(settings_cls),
            dotenv_settings,
            file_secret_settings,
        )
