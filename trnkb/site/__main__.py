"""``python -m trnkb.site OUT``."""

from trnkb.site import app

__all__: list[str] = []

app()
