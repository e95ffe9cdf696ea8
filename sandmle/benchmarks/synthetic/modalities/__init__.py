"""Per-modality generators: each module's ``MODALITY`` meets :mod:`.contract` (data writer,
generic features, structure-aware features, and optionally its own plan, ladder and
description specifics); :mod:`.registry` maps a seed's DNA to one of them."""
