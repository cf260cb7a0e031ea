"""inspect_gaia's tests: one module per source module, helpers in ``tests.helpers``."""
