"""python serve.py -> the dashboard and gateway on http://127.0.0.1:8122 (see --help)."""
import sys

from benchwarmers.cli.main import run

if __name__ == "__main__":
    run(["serve", *sys.argv[1:]])
