"""The viewer's tests' fixtures: the three runs of tests/view_db.py made once per module (`runs`,
a copy for each test), and for the browser tests Debian's chromium driven by Playwright, one
browser per module and a fresh page per test (helpers in chromium.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
import view_db
from chromium import CHROMIUM_ARGS
from playwright.sync_api import Browser, Page, sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium")
    assert executable, "Debian's chromium is needed: apt-get install -y chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return view_db.build_once(tmp_path_factory.mktemp("view_db"))


@pytest.fixture
def runs(built, db):
    """The viewer's three runs, made once for the module, in a copy a test may add runs to."""
    return view_db.copied(built, db)
