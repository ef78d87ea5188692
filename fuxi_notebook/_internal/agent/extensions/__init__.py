"""What a project or plugin adds to a session: plugins, slash commands, skills."""
