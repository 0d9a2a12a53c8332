"""The matrix harness: the suite, the cell runner, baselines and the HTML diff report.

`python -m matrix run --backend B --out FILE` writes one cell (this interpreter x B);
`python -m matrix report FILES... --out reports/` merges cells and renders the report.
"""
