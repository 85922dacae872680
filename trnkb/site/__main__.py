"""``python -m trnkb.site OUT``."""

from trnkb.site import app

app()
