"""Lean verification machinery: goals (`goal`), scripts, splicing (`splice`), backends (`backend`,
`repl`), checkouts (`checkout`) and verdicts (`outcome`).

Import from the module that holds a name: index rows import `gitrefs` on every run, and importing
this package must not load the rest of the machinery with it (~30 ms of each run's start).
"""
