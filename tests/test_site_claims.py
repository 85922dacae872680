"""The claims page: one section per claim, with its note and inputs."""

from __future__ import annotations

import html
import re

from trnkb.audit.claims import validate_claims
from trnkb.audit.claims.explain import raw_entries
from trnkb.kb import load
from trnkb.site.pages import claims_page


def test_every_claim_has_an_anchor_whose_section_shows_its_note_and_inputs():
    kb = load()
    claims = validate_claims(kb)
    raw = raw_entries(kb)
    page = claims_page(kb)
    sections = dict(re.findall(r'<section class="trnkb-claim" id="claim-([^"]+)">(.*?)</section>',
                               page))
    assert set(sections) == {c.id for c in claims}
    noted = 0
    for c in claims:
        body = html.unescape(sections[c.id])
        assert html.unescape(c.statement) in body
        note = " ".join(str(raw.get(c.id, {}).get("note", "") or "").split())
        if note:
            noted += 1
            assert " ".join(note.split()) in " ".join(body.split()), c.id
        for i in c.inputs:
            if "kb" in i:  # every KB value the claim read, with its source linked
                assert f"<code>{i['kb']}</code>" in body, (c.id, i["kb"])
                assert f'sources.html#src-{i["source"]}' in sections[c.id], (c.id, i)
    assert noted >= 60  # the registry's notes (67 when this test was written) all show
    # the tables above link each claim id to its section
    assert 'href="#claim-s004-hbm-144gb-from-12-high"' in page
