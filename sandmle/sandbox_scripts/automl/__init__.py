"""The AutoML baseline program, in parts: one module each, joined into one file to run.

The reference policies hand the program in as a node's single file (AIDE/AIRA nodes are
one-file programs), so it runs as one text: ``sandmle.policies.automl.script_source`` joins
these modules in its ``PARTS`` order (settings, task, features, models, structured, output,
main) into the program ``automl_code`` hands in. The program's docstring is the first part's,
its imports are all parts' outside imports merged, and the imports between parts (``from
.settings import LEVEL``) are dropped: in one file those names are globals. So each part
imports only the standard library, numpy, pandas, scikit-learn, scipy, Pillow and its
siblings, defines names no other part defines, and imports nothing after its body starts
(``join_parts`` refuses otherwise). Settings such as ``LEVEL`` and ``SAFE`` live in `settings`,
where the policies rewrite their lines in the joined text.

Host code may import a part for what it computes (``find_metric`` names the metric a task's
description names, as the program reads it).
"""

from .task import find_metric

__all__ = ["find_metric"]
