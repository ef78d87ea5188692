"""Checkpoints: what the agent's calls changed in the working folders, kept so that it can
be undone (`FuxiSDKClient.rewind_files`, and the notebook's `%fuxi undo`).
"""
