import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from tests.fake_api.fixtures import fake_api  # noqa: E402,F401  (a fixture)
