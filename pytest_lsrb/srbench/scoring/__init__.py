"""Scoring a discovery result: metrics per data split, symbolic accuracy (sympy and the paper's
LLM judge), the search-progress curve and the attempt record's fields."""
