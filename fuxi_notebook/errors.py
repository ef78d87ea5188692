"""The exception tree of fuxi_notebook.

    FuxiSDKError
    ├── ConfigurationError        bad options, missing API key, unknown model spec
    ├── ModelError                the model could not answer (after retries)
    │   └── ModelStreamError      a stream broke or stalled mid-response
    ├── ProcessError              the run failed (the comparable SDK: the CLI process did)
    │   └── ResultError           a single-shot query() ended with an error ResultMessage
    ├── CLIConnectionError        the agent cannot be talked to (never connected, or gone)
    │   ├── ClientNotConnectedError  a FuxiSDKClient method was used before connect()
    │   └── CLINotFoundError      never raised: there is no CLI to find
    ├── CLIJSONDecodeError        never raised: there is no CLI output to decode
    └── ScriptError               a ScriptedModel or fake-server script went wrong

    CanUseToolShadowedWarning     (a UserWarning) `can_use_tool` will never be asked
        ├── UnexpectedModelCall   more requests than scripted steps
        └── UnconsumedSteps       steps left over at assert_complete()

The `CLI*` and `ProcessError` names are the comparable SDK's, so code written against it
catches what it meant to catch; here the loop runs in-process, so there is no CLI.
Tool failures and permission denials never raise: they become `is_error` tool results
the model can read. This module imports nothing from the rest of the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import ResultMessage

__all__ = [
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "CanUseToolShadowedWarning",
    "ClientNotConnectedError",
    "ConfigurationError",
    "FuxiSDKError",
    "ModelError",
    "ModelStreamError",
    "ProcessError",
    "ResultError",
    "ScriptError",
    "UnconsumedSteps",
    "UnexpectedModelCall",
]


class FuxiSDKError(Exception):
    """Base of every error raised by fuxi_notebook."""


class ConfigurationError(FuxiSDKError):
    """The options, environment or arguments are not usable as given."""


class ModelError(FuxiSDKError):
    """The model could not produce a response.

    Attributes:
        status: the HTTP status, when the API answered with one.
        retryable: whether another attempt may succeed.
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ModelStreamError(ModelError):
    """A response stream broke or stalled.

    Attributes:
        blocks_completed: how many content blocks had completed before the failure; a
            stream that broke after a completed block must not be silently retried.
    """

    def __init__(self, message: str, *, blocks_completed: int = 0, retryable: bool = True) -> None:
        super().__init__(message, retryable=retryable)
        self.blocks_completed = blocks_completed


class ProcessError(FuxiSDKError):
    """The run failed. In the comparable SDK the CLI subprocess exited with an error; here
    the loop runs in-process, so this is the base of run failures (`ResultError`).

    Attributes:
        exit_code: 1 for a failed run (the SDK's CLI exit code; kept for code that reads it).
        stderr: the errors the run reported, one per line (None if it reported none).
    """

    def __init__(self, message: str, *, exit_code: int | None = 1,
                 stderr: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class ResultError(ProcessError):
    """A single-shot `query()` ended with an error result; the result is attached."""

    def __init__(self, result: ResultMessage) -> None:
        detail = "; ".join(result.errors or []) or result.subtype
        super().__init__(detail, stderr="\n".join(result.errors) if result.errors else None)
        self.result = result
        self.subtype = result.subtype


class CLIConnectionError(FuxiSDKError):
    """The agent cannot be talked to. In the comparable SDK: the CLI could not be started
    or the connection to it was lost; here: a client used while not connected."""


class ClientNotConnectedError(CLIConnectionError):
    """A FuxiSDKClient was used before `connect()` or after `disconnect()`."""


class CLINotFoundError(CLIConnectionError):
    """Never raised here: the loop runs in-process, so there is no CLI to find. It exists
    so code that catches it keeps working; a missing API key is a ConfigurationError."""


class CLIJSONDecodeError(FuxiSDKError):
    """Never raised here: there is no CLI output to decode. A model stream that breaks
    mid-response is a ModelStreamError."""


class ScriptError(FuxiSDKError):
    """A scripted model or fake-server script was used in a way it does not allow."""


class UnexpectedModelCall(ScriptError):
    """The script ran out of steps but the loop asked for another response."""


class UnconsumedSteps(ScriptError):
    """The run ended while scripted steps were still unused."""


class CanUseToolShadowedWarning(UserWarning):
    """`can_use_tool` was given but cannot be asked about some or all calls: a bare tool
    name in `allowed_tools` approves every call of that tool, and `bypassPermissions`
    approves every call, before the callback's turn comes."""
