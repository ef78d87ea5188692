"""Model layer: the `Model` protocol, `AnthropicModel`, `ScriptedModel`, and model resolution.

Importing this package never imports `anthropic`; `AnthropicModel` does that on first use.
"""
