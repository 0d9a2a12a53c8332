"""The project-tests suite: this project's own pytest tests, run plainly and with every test
function compiled (`python -m matrix project-tests`), and the tests whose outcome differs.

    plugin.py   the pytest plugin: compiles each test function (unobserved, so that tests of
                the compiler see only their own compilations) and records every outcome
    runner.py   the two pytest runs (subprocesses) and their comparison into a cell document
    cli.py      the command line and its summary

Importing this package imports nothing else.
"""
