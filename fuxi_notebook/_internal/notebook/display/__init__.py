"""How a run shows up: renderers, the live view, approval cards, what a cell spent."""
