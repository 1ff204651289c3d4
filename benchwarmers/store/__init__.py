"""The data folder's contents: JSON config files and the SQLite record."""
from .config import Config
from .db import Database

__all__ = ["Config", "Database"]
