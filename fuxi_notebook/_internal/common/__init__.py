"""Leaf modules: one home per shared concept (secret names, reminder tags, replay modes, the
config folder, environment switches, the public names). They import nothing above them.
"""
