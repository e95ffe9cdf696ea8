"""The ``llm`` generator backend: SandMLE's roles as prompts to any Inspect model
(:mod:`.backend`), the file contract its generation code meets (:mod:`.contract`), the
sandbox that code runs in (:mod:`.sandboxed`), and packs from a seed's own description
(:mod:`.seed_dna`, :mod:`.from_seed`)."""
