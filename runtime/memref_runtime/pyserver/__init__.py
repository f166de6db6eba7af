"""The pre-started interpreter behind lit's `%PYTHON`: a server that has imported numpy, the MLIR
bindings and the runtime, and forks a child per test command.

  client.py      what `%PYTHON` runs (`python -I -S client.py ARGS`): hands the command to the
                 server; its docstring is the wire protocol
  server.py      the server itself
  lifecycle.py   starting the servers of a lit run and stopping them at its end

Nothing here imports numpy or MLIR at import time (the server imports them once it runs).
"""
