"""Static analysis of a bash command for the Bash permission check (pure, synchronous):
parsing, words, redirects, globs, what each command reaches.
"""
