"""python scripts/init.py [FOLDER] [--endpoint NAME BASE_URL --key]: seed a data folder, never overwriting."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchwarmers.cli.main import run  # noqa: E402

if __name__ == "__main__":
    run(["init", *sys.argv[1:]])
