"""Subject ids: how an id such as ``20240620_sweagent_claude3.5sonnet`` or ``openhands/gpt-4o`` becomes a
model and a scaffold.

- :mod:`.aliases`: an alias file's rules (TOML) and :func:`~.aliases.split_subject`, which applies them;
- :mod:`.harnesses`: the ``harness_model`` table, harness names kept as data;
- :mod:`.conventions`: the shipped subject-id conventions layered below a file's own rules;
- :mod:`.model_keys` and :mod:`.unsplit`: the file-wide rules (model spellings merged, one scaffold for a
  file whose ids do not all name one), both reported.

The py-irt reader (:mod:`..importers.pyirt`), the column guesser and ``subject=COLUMN`` of ``--columns``
(:mod:`..columns`) and the app's Subject ids table all use them; they import no reader, so the readers
and the validation that guesses columns do not import each other through them.
"""
