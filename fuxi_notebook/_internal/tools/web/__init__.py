"""The web tools: WebFetch (checked addresses, HTML to markdown) and WebSearch."""
