"""Corpus: canonical table, readers, importers, validation and rescoring."""
