"""python gateway.py -> the gateway routes alone on http://127.0.0.1:8123 (see --help)."""
import sys

from benchwarmers.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["gateway", *sys.argv[1:]]))
