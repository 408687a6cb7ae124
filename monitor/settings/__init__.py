"""The monitor's own configuration: ``monitor.yaml`` and its one set of defaults (``config``), the file read
safely (``configfile``), every problem of a parsed file (``configcheck``), the command-line flags on top of
it (``configflags``), the schema derived from its dataclasses (``configschema``), secrets by reference
(``secrets``) and kept out of what is printed (``redact``), the check of each kind of value a user gives
(``valuecheck``), the topic allow/deny patterns (``topicfilter``) and the collector's roles (``roles``).

May import: ``monitor.fileio``, ``monitor.kafka``, ``monitor.model`` (a default the model defines, a
topic config's parser) and this layer.
"""
