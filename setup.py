"""Build glue only (metadata is in pyproject.toml): ships examples/, the suite's starter tasks and the plugin."""
from setuptools import find_packages, setup

# A checkout keeps these folders at the top; an installed package carries them inside benchwarmers/:
# home.examples_dir() and suite.tasks.starter_dir() look there second, when there is no checkout.
BUNDLED = {"benchwarmers.examples": "examples",
           "benchwarmers.suite.tasks": "suite/tasks",
           "benchwarmers.plugin": "plugins/benchwarmers"}
# glob's * skips dot-files, and the plugin keeps .mcp.json and .claude-plugin/ at its root.
EVERYTHING = ["*", "**/*", ".*", ".*/*", "**/.*"]

setup(
    packages=find_packages(include=["benchwarmers", "benchwarmers.*"]) + sorted(BUNDLED),
    package_dir=BUNDLED,
    package_data={"benchwarmers.dashboard": ["static/*", "static/**/*"], "benchwarmers.catalog": ["data/*.json"],
                  "benchwarmers.suite": ["data/*.json"],       # the picks of real fixes `bench suite fetch` builds
                  **{package: EVERYTHING for package in BUNDLED}},
    exclude_package_data={package: ["__pycache__/*", "**/__pycache__/*", "*.py[cod]", "**/*.py[cod]"]
                          for package in BUNDLED},
    include_package_data=False,
)
