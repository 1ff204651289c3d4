"""The test suite: a package, so its helpers (tests.helpers) and fakes (tests.fakes) import by name."""
