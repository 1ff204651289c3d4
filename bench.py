"""python bench.py ... -> the `bench` command in a checkout, with no install (see --help)."""

from benchwarmers.cli.main import run

if __name__ == "__main__":
    run()
