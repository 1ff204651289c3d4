"""python bench.py ... -> the `bench` command in a checkout, with no install (see --help)."""
import sys

from benchwarmers.cli.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
