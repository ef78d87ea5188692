"""The file tools (Read, Write, Edit, Glob, Grep) and their helpers."""
