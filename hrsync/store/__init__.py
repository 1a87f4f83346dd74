"""The state store (SQLite or PostgreSQL): the Store (repo.py) over one module per table."""
