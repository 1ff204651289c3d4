"""Build glue only (metadata is in pyproject.toml): ships examples/ inside the package as benchwarmers/examples."""
from setuptools import find_packages, setup

# A checkout keeps the data-folder seed at the top (examples/); an installed package carries it as
# benchwarmers/examples, where home.examples_dir() looks second.
setup(
    packages=find_packages(include=["benchwarmers", "benchwarmers.*"]) + ["benchwarmers.examples"],
    package_dir={"benchwarmers.examples": "examples"},
    package_data={"benchwarmers.dashboard": ["static/*", "static/**/*"], "benchwarmers.catalog": ["data/*.json"],
                  "benchwarmers.examples": ["*", "**/*"]},
    include_package_data=False,
)
