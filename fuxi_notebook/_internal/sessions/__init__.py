"""Session records: what a `%%fuxi` cell stores in the notebook, and how it is shown.

A record is plain, versioned, validated JSON (pydantic) holding one cell's run, redacted of
secrets and capped in size; the transcript renders it without the live widgets. This
package is core: it never imports IPython, ipywidgets or anthropic.
"""
