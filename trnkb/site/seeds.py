"""What each seed document is, for the sources page.

``specs/sources.yaml`` names a seed by its file name (``004_406711927e432c17.txt``), which
a reader of the site does not have. This table says what each file is: title, author or
publisher, date and, where the document is public, its URL. The descriptions come from
``/work/shared/seeds/README.md`` and the documents themselves (the SemiAnalysis URL is
the one quoted in ``001_835c76992b60ea80.txt``). Unknown fields are None, never guessed.
"""

from __future__ import annotations

SEEDS: dict[str, dict[str, str | None]] = {
    "000_63bdd941bc829ce5.txt": {
        "title": "AWS Trainium3 Analysis",
        "publisher": "unknown author (web page)",
        "date": "2025",
        "public_url": None,
        "what": "A generic analysis page on Trainium3 (3 nm, HBM3, \">3 TB/s\", a guessed "
                "400-500 W TDP); its author marks it as partly projected. Low reliability.",
    },
    "001_835c76992b60ea80.txt": {
        "title": "AWS Trainium3 Deep Dive (summary, English and Chinese)",
        "publisher": "unknown author (summary of the SemiAnalysis article)",
        "date": "2025-12",
        "public_url": None,
        "what": "A short summary of the SemiAnalysis article with a competitor table "
                "(GB200, MI450X, TPUv7); it garbles several figures. Low to medium reliability.",
    },
    "002_95c34960600bebb9.txt": {
        "title": "Trainium3 overview",
        "publisher": "unknown author (marketing-style article)",
        "date": "2025-12",
        "public_url": None,
        "what": "A marketing-style overview with relative claims only (\"up to 4x\" compute, "
                "\"2x HBM\"), some of them wrong. Low reliability.",
    },
    "003_d7a2dc4f141d126d.txt": {
        "title": "AWS Trainium (encyclopedia entry)",
        "publisher": "unknown author (wiki-style entry)",
        "date": "2025",
        "public_url": None,
        "what": "An encyclopedia-style entry on AWS Trainium in general; qualitative only.",
    },
    "004_406711927e432c17.txt": {
        "title": "AWS Trainium3 Deep Dive | A Potential Challenger Approaching",
        "publisher": "SemiAnalysis (Dylan Patel, Daniel Nishball, Wega Chu and others)",
        "date": "2025-12-04",
        "public_url": "https://newsletter.semianalysis.com/p/aws-trainium3-deep-dive-a-potential",
        "what": "The analyst deep dive the project started from: chip, HBM, package, rack SKUs, "
                "NeuronLink lanes and switch generations, EFA scale-out, microarchitecture, "
                "software and datacenters. The richest source; analyst estimates with a few "
                "internal slips. Paid article: its tables and figures are images, not text.",
    },
}
