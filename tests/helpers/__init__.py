"""Test helpers shared by the test modules: data folders, raw HTTP, SSE frames, panel and route setups."""
