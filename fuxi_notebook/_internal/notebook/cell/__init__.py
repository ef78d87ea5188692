"""The `%%fuxi` cell: the magic, its arguments, the controller that runs cells, which
conversation a cell continues, which notebook and cell it is.
"""
