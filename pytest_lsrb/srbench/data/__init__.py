"""llm_srbench problems: the `Problem` record and reading problem files and the official release."""
