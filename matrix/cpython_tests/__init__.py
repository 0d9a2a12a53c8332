"""The cpython-tests suite: CPython's own Lib/test modules, plainly and with every test method
compiled, one child process per run (`python -m matrix cpython-tests`).

    modules.py   the default list, --all discovery, name validation (module_names.json)
    child.py     runs in the child: loads one module, runs it plain or compiled, writes outcomes
    runner.py    the parent: child processes, timeouts, --jobs, the comparison into a row
    cell.py      the JSON document: build, validate, totals (standard library only)
    cli.py       the command line and its text summary

Importing this package imports nothing else (the CLI parses without numpy).
"""
