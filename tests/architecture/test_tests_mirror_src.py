"""``tests/`` mirrors ``src/crowdsift/``: every package has a folder of tests of the same name
(``src/crowdsift/pipeline/reddit`` → ``tests/pipeline/reddit``), so a module's tests are found by
its path. Cross-cutting suites (architecture, crash, faults, property, …) have folders of their
own beside them."""

from __future__ import annotations

from tests.support.paths import SRC, TESTS


def test_every_package_under_src_has_a_folder_of_tests() -> None:
    packages = sorted(
        init.parent.relative_to(SRC)
        for init in SRC.rglob("__init__.py")
        if init.parent != SRC and "__pycache__" not in init.parts
    )
    assert packages, f"no packages found under {SRC}"
    missing = [
        str(package)
        for package in packages
        if not any((TESTS / package).glob("test_*.py"))
        and not any((TESTS / package).rglob("test_*.py"))
    ]
    assert not missing, f"packages with no matching folder of tests under tests/: {missing}"
