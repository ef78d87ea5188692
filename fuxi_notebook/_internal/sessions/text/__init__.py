"""A session record as text: transcripts, the checklist, model text shown as markdown."""
