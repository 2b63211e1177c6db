"""The commands of the ``ddr`` command line, one module per command or group of commands.

:mod:`ddr_explorer.core.cli` builds the parser and dispatches to the ``cmd_*`` functions here; each takes
the parsed arguments and returns the exit status (:mod:`.common`).  A command prints what the core
functions it calls compute, and nothing else: the numbers are the app's and the DDR sheet's.

- :mod:`.corpus`: ``ddr inspect``, ``ddr convert``, ``ddr formats``
- :mod:`.estimators`: ``ddr henderson``, ``ddr methods`` (variance components by each estimator)
- :mod:`.dstudy`: ``ddr dstudy`` (and its ``--preview``)
- :mod:`.fit`: ``ddr fit``
- :mod:`.report`: ``ddr report`` (the DDR sheet, and the analyses it runs first)
- :mod:`.analyses`: ``ddr analyses``
"""
