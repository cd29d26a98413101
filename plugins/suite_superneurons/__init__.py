"""dlsys-suite plugin: SuperNeurons (Wang et al., PPoPP 2018), dynamic GPU memory management."""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_superneurons.technique import TECHNIQUE

    return [TECHNIQUE]
