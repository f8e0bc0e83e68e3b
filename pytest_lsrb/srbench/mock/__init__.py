"""The mock adapter's llm_srbench answers: a deterministic local baseline for every method's prompts."""
