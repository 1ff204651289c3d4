"""Build glue only (metadata is in pyproject.toml): ships examples/ and the suite's starter tasks inside the package."""
from setuptools import find_packages, setup

# A checkout keeps the data-folder seed at the top (examples/) and the suite's starter pack in suite/tasks; an
# installed package carries them as benchwarmers/examples and benchwarmers/suite/tasks, where home.examples_dir()
# and suite.tasks.starter_dir() look when there is no checkout.
setup(
    packages=find_packages(include=["benchwarmers", "benchwarmers.*"]) + ["benchwarmers.examples",
                                                                           "benchwarmers.suite.tasks"],
    package_dir={"benchwarmers.examples": "examples", "benchwarmers.suite.tasks": "suite/tasks"},
    package_data={"benchwarmers.dashboard": ["static/*", "static/**/*"],
                  "benchwarmers.examples": ["*", "**/*"],
                  "benchwarmers.suite.tasks": ["*", "**/*"]},
    include_package_data=False,
)
