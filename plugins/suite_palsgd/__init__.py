"""dlsys-suite plugin: PALSGD, pseudo-asynchronous local SGD (Naganuma et al., TMLR 2025).
Registers the technique and GPT-Neo-8M (the authors' small model, not in the zoo)."""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_palsgd.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_palsgd.technique:gpt_neo_8m", call=True, listed=True)
