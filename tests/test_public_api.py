"""The public API: every exported name resolves, `__all__` is sorted, imports stay lazy."""

from __future__ import annotations

import subprocess
import sys

import fuxi_notebook

#: The public API, pinned: adding or removing a name is a decision this test makes visible.
EXPORTED = [
    "AnthropicModel", "AssistantMessage", "CanUseTool", "ClientNotConnectedError",
    "ConfigurationError", "ContentBlock", "FuxiAgentOptions", "FuxiSDKClient", "FuxiSDKError",
    "HookCallback", "HookEvent", "HookMatcher", "Message", "Model", "ModelError",
    "PermissionMode", "PermissionResult", "PermissionResultAllow", "PermissionResultDeny",
    "PermissionRuleValue", "PermissionUpdate", "ResultError", "ResultMessage", "ScriptedModel",
    "StreamEvent", "SystemMessage", "TextBlock", "ThinkingBlock", "ToolPermissionContext",
    "ToolResultBlock", "ToolUseBlock", "UserMessage", "__version__", "load_ipython_extension",
    "query", "unload_ipython_extension",
]


def test_the_exported_names_are_pinned_and_every_one_resolves():
    assert fuxi_notebook.__all__ == EXPORTED
    for name in EXPORTED:
        assert getattr(fuxi_notebook, name) is not None


def test_unknown_attribute_raises_attribute_error():
    try:
        fuxi_notebook.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_loads_no_heavy_module():
    code = ("import sys, fuxi_notebook; heavy = [m for m in ('anthropic', 'jsonschema', "
            "'tree_sitter', 'pathspec', 'fuxi_notebook.agent') if m in sys.modules]; "
            "print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_using_the_loop_does_not_import_anthropic_until_a_request():
    code = ("import sys; from fuxi_notebook import query, FuxiAgentOptions, ScriptedModel; "
            "print('anthropic' in sys.modules, 'tree_sitter' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False False"


def test_child_processes_of_the_suite_import_this_checkout(tmp_path):
    from .conftest import CHECKOUT

    done = subprocess.run([sys.executable, "-c", "import fuxi_notebook; "
                           "print(fuxi_notebook.__file__)"], cwd=tmp_path, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == str(CHECKOUT / "fuxi_notebook" / "__init__.py")
