"""Benchwarmers: a self-hosted panel gateway for large language models."""
__version__ = "0.1.0"
