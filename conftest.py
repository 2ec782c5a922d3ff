"""Project-wide test settings for cfcheck's own tests (the plugin itself needs no conftest)."""

from hypothesis import settings

# Property tests run on shared 2-core CI machines: no per-example deadline, modest budgets.
settings.register_profile("cfcheck", deadline=None, max_examples=60)
settings.load_profile("cfcheck")
