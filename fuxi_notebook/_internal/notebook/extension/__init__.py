"""What the kernel and the frontend extension (labextension/) say to each other over the
`fuxi.notebook` comm: the live notebook, the Settings Editor's defaults, the cells an
agent cell is about.
"""
