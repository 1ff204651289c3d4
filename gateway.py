"""python gateway.py -> the gateway routes alone on http://127.0.0.1:8123 (see --help)."""
import sys

from benchwarmers.cli.main import run

if __name__ == "__main__":
    run(["gateway", *sys.argv[1:]])
