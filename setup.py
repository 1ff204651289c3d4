"""Build glue only (metadata is in pyproject.toml): ships examples/, the Claude Code plugin and suite/ in the package."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
# A checkout keeps these folders at the top; an installed package carries them inside benchwarmers/ (home.py
# looks for examples/ in both places). suite/ joins when it exists, so a tree without it still builds.
BUNDLED = {"benchwarmers.examples": "examples",
           "benchwarmers.plugin": "plugins/benchwarmers",
           "benchwarmers.suite": "suite"}
present = {package: folder for package, folder in BUNDLED.items() if (HERE / folder).is_dir()}
# glob's * skips dot-files, and the plugin keeps .mcp.json and .claude-plugin/ at its root.
EVERYTHING = ["*", "**/*", ".*", ".*/*", "**/.*"]

setup(
    packages=find_packages(include=["benchwarmers", "benchwarmers.*"]) + sorted(present),
    package_dir=present,
    package_data={"benchwarmers.dashboard": ["static/*", "static/**/*"],
                  **{package: EVERYTHING for package in present}},
    exclude_package_data={package: ["__pycache__/*", "**/__pycache__/*", "*.py[cod]", "**/*.py[cod]"]
                          for package in present},
    include_package_data=False,
)
