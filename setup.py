"""Build glue only (metadata is in pyproject.toml): ships examples/ inside the package as benchwarmers/examples."""
from setuptools import find_packages, setup

# A checkout keeps the data-folder seed at the top (examples/); an installed package carries it as
# benchwarmers/examples, where home.examples_dir() looks second.
# The suite: its starter pack (suite/tasks) ships as benchwarmers/suite/tasks, where suite.tasks.starter_dir() looks
# when there is no checkout.
SUITE_TASKS = "benchwarmers.suite.tasks"
setup(
    packages=find_packages(include=["benchwarmers", "benchwarmers.*"]) + ["benchwarmers.examples", SUITE_TASKS],
    package_dir={"benchwarmers.examples": "examples", SUITE_TASKS: "suite/tasks"},
    package_data={"benchwarmers.dashboard": ["static/*", "static/**/*"], "benchwarmers.catalog": ["data/*.json"],
                  "benchwarmers.examples": ["*", "**/*"],
                  SUITE_TASKS: ["*", "**/*"]},
    include_package_data=False,
)
