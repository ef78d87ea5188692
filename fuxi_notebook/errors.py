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

import dataclasses
from typing import TYPE_CHECKING, Any

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
    """A single-shot `query()` ended with an error result (yielded just before this).

    It carries the result's payload, as the comparable SDK's `ResultError` does, so code
    can branch on why the run failed without matching text::

        except ResultError as e:
            if e.terminal_reason == "api_error" and e.api_error_status == 529: ...

    Attributes:
        subtype: the result's subtype (`error_max_turns`, `error_during_execution`, …).
        errors: the result's error texts (the exception's text is them, joined).
        result: the result's text (None on an error result here: `result` is for success).
        api_error_status: the HTTP status of the API call that ended the run, if one did.
        terminal_reason: why the loop ended (`max_turns`, `api_error`, `budget_exhausted`…).
        session_id: the session to resume.
        data: the result as a dict (`uuid` included), as the comparable SDK's `data`.
        result_message: the ResultMessage itself.
    """

    def __init__(self, result: ResultMessage | str, data: dict[str, Any] | None = None,
                 exit_code: int | None = 1) -> None:
        # A text first argument is the exception protocol's `type(e)(*e.args)` (copy,
        # pickle); the attributes come back from __dict__ afterwards.
        message = result if isinstance(result, str) else None
        self.result_message: ResultMessage | None = None if isinstance(result, str) else result
        if self.result_message is not None:
            data = {"type": "result", **dataclasses.asdict(self.result_message)}
        data = data if isinstance(data, dict) else {}
        self.data = data
        self.subtype: str | None = _text_or_none(data.get("subtype"))
        raw = data.get("errors")
        self.errors: list[str] = [e.strip() for e in raw if isinstance(e, str) and e.strip()] \
            if isinstance(raw, list) else []
        self.result: str | None = _text_or_none(data.get("result"))
        status = data.get("api_error_status")
        self.api_error_status: int | None = status if isinstance(status, int) else None
        self.terminal_reason: str | None = _text_or_none(data.get("terminal_reason"))
        self.session_id: str | None = _text_or_none(data.get("session_id"))
        detail = message or "; ".join(self.errors) or self.result or self.subtype or (
            f"API error (HTTP {self.api_error_status})" if self.api_error_status
            else "unknown error")
        super().__init__(detail, exit_code=exit_code,
                         stderr="\n".join(self.errors) if self.errors else None)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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
