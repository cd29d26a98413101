"""dlsys-suite plugin: PALSGD, pseudo-asynchronous local SGD (Naganuma et al., TMLR 2025).
Registers the technique and GPT-Neo-8M (the authors' small model, not in the zoo)."""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_palsgd.technique import TECHNIQUE

    return [TECHNIQUE]


@hookimpl
def suite_workloads():
    from suite_palsgd.technique import gpt_neo_8m

    return [gpt_neo_8m()]
