"""Public test kit: the fake Messages API server and the shared script format.

Tests use the real `anthropic` client against `FakeMessagesServer` on 127.0.0.1; a
separate kernel process reaches it through `ANTHROPIC_BASE_URL` (start it with
`python -m fuxi_notebook.testing serve --script FILE.json`). The cloud providers' fakes
(`FakeBedrockServer`, `FakeVertexServer`, `FakeFoundryServer`) serve the same scripts on
each provider's wire, for `anthropic`'s Bedrock, Vertex and Foundry clients.
"""

from .._internal.models.script import Fault, Step, Turn, load_script, text, thinking, tool_use
from .cache import PromptCache, count_tokens
from .fake_server import FakeMessagesServer, RecordedRequest
from .provider_fakes import FakeBedrockServer, FakeFoundryServer, FakeVertexServer

__all__ = [
    "FakeBedrockServer",
    "FakeFoundryServer",
    "FakeMessagesServer",
    "FakeVertexServer",
    "Fault",
    "PromptCache",
    "RecordedRequest",
    "Step",
    "Turn",
    "count_tokens",
    "load_script",
    "text",
    "thinking",
    "tool_use",
]
