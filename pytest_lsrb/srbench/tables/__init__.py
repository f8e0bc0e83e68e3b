"""The paper's tables and analyses from attempt records (Table 1, search progress, ID vs OOD)."""
