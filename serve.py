"""python serve.py -> the dashboard and gateway on http://127.0.0.1:8122 (see --help)."""
import sys

from benchwarmers.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
