"""The one place the version comes from (pyproject reads it, --version prints it)."""
__version__ = "0.1.0"
