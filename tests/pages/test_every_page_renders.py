"""AppTest: every page listed in the navigation renders on the demo model without an exception."""

import pytest

from pages.ui.shell.nav import existing_pages
from tests.pages.conftest import make_app


@pytest.mark.parametrize("page", [p.path for p in existing_pages()])
def test_page_renders_without_exception(tmp_path, page):
    at = make_app(tmp_path, page=page)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
