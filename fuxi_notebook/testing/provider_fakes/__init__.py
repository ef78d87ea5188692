"""Fakes of the cloud providers that serve Claude: Bedrock, Vertex AI and Foundry.

Each runs on 127.0.0.1 and speaks its provider's wire (routes, authentication, body
rules, error shapes, stream framing) over `FakeMessagesServer`'s script, request records
and usage accounting, so the real `anthropic` provider clients (`AsyncAnthropicBedrock`,
`AsyncAnthropicVertex`, `AsyncAnthropicFoundry`) run against them unchanged, and each
refuses what its provider refuses. `sigv4` and `aws_event_stream` are the AWS parts.
"""

from ..fake_server import RecordedRequest
from .aws_event_stream import FrameError, decode_frames
from .bedrock import BEDROCK_VERSIONS, TEST_AWS_CREDENTIALS, FakeBedrockServer
from .foundry import TEST_FOUNDRY_KEY, FakeFoundryServer
from .sigv4 import AwsCredentials, SigV4Problem, sign_headers, verify_sigv4
from .vertex import TEST_VERTEX_TOKEN, VERTEX_VERSIONS, FakeVertexServer

__all__ = [
    "BEDROCK_VERSIONS",
    "TEST_AWS_CREDENTIALS",
    "TEST_FOUNDRY_KEY",
    "TEST_VERTEX_TOKEN",
    "VERTEX_VERSIONS",
    "AwsCredentials",
    "FakeBedrockServer",
    "FakeFoundryServer",
    "FakeVertexServer",
    "FrameError",
    "RecordedRequest",
    "SigV4Problem",
    "decode_frames",
    "sign_headers",
    "verify_sigv4",
]
