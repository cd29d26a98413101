"""The data types of the plugin contract, one module per topic; :mod:`suite.technique` (and
:mod:`suite.api`, for plugins) re-exports every public one.

* :mod:`suite.declaration.vocabulary` -- categories, fidelities, capabilities, vocabularies, references;
* :mod:`suite.declaration.params` -- :class:`Paper`, :class:`Variant`, :class:`Param`, ``read_data``;
* :mod:`suite.declaration.results` -- :class:`ScenarioSpec`, :class:`Scenario`, :class:`Metric`,
  :class:`Result`, :class:`Skip`;
* :mod:`suite.declaration.claims` -- acceptances, :class:`Null`, :class:`Assumption`, :class:`Claim`.
"""
