"""Render: the figures, the document model, the sections and the HTML page and summary.md, made
only from the find stage's Findings."""
