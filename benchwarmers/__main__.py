"""python -m benchwarmers: the same program as the `benchwarmers` and `bench` commands."""
from .cli.main import run

if __name__ == "__main__":
    run()
