"""The ``rankflavor`` command: :mod:`.main` parses and dispatches; one module per command family."""
