"""Everything users should not import: the machinery behind the public API (`fuxi_notebook`,
`fuxi_notebook.types`, `fuxi_notebook.testing`). Layers and what each package may import:
docs/architecture.md.
"""
