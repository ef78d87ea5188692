"""The notebook side: `%%fuxi`, live rendering, approvals, kernel tools.

The ONLY package that imports IPython and ipywidgets; the core never does.
"""
