"""dlsys-suite plugin: SuperNeurons (Wang et al., PPoPP 2018), dynamic GPU memory management."""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_superneurons.technique:TECHNIQUE", listed=True)
