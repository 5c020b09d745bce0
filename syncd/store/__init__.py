"""Local store: SQLAlchemy models, engine setup and migrations, repository functions."""
