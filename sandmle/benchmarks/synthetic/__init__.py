"""SandMLE's synthetic sandbox generator: four roles, a sanity gate, and packs.

Import what you need from its modules (``sandmle synth --help`` imports this package, and
must not pay for numpy, pandas and scikit-learn). From the bottom up:

* data: :mod:`.blueprint` (request, DNA, blueprint), :mod:`.streams` (the roles' random
  streams), :mod:`.artifacts` (hidden rule, developed task, public data, description),
  :mod:`.domains`, :mod:`.seeds`, :mod:`.secret`, :mod:`.ranked_cells`, :mod:`.targets`,
  :mod:`.rows`, :mod:`.task_files` (the task folder on disk);
* draws and models: :mod:`.planning` (noise, domain, form, size), :mod:`.learners`;
* :mod:`.modalities` (each meets :mod:`.modalities.contract`; :mod:`.modalities.registry`);
* the roles: :mod:`.strategist`, :mod:`.developer`, :mod:`.baselines`, :mod:`.mlops`,
  :mod:`.writer` (with :mod:`.phrases`, :mod:`.draft`, :mod:`.sections`,
  :mod:`.data_section`), :mod:`.leaks`;
* :mod:`.backend` (the roles' protocol, procedural backend), :mod:`.llm`, :mod:`.backends`;
* the gate and the pipeline: :mod:`.determinism`, :mod:`.sanity`, :mod:`.pipeline`,
  :mod:`.transfer`, :mod:`.packs`, :mod:`.builtin`;
* entry points: :mod:`.task` (the Inspect task), :mod:`.cli` (``sandmle synth``), and
  :mod:`.release` (importing published SandMLE tasks).
"""
