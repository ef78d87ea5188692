"""The built-in tools every session makes for itself, because they need the session:
web fetch and search (its model, its usage) and the task list (its conversation's).

A subagent's session makes its own, so these are never passed on from a parent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import Session

__all__ = ["own_tool_names", "own_tools"]


def own_tool_names() -> frozenset[str]:
    """The names of the tools `own_tools` makes."""
    from ..tools.tasks import TaskCreateTool, TaskGetTool, TaskListTool, TaskUpdateTool
    from ..tools.web.fetch_tool import WebFetchTool
    from ..tools.web.search import WebSearchTool

    return frozenset(tool.name for tool in (WebFetchTool, WebSearchTool, TaskCreateTool,
                                            TaskUpdateTool, TaskListTool, TaskGetTool))


def own_tools(session: Session) -> list[Any]:
    """Web (on the session's model, its cost counted in the session's usage) and the task
    list (the conversation's, rebuilt from the history when it was loaded)."""
    from ..tools.tasks import task_tools
    from ..tools.web.fetch_tool import web_tools

    options = session.options
    web = web_tools(lambda: (session.model, session.model_name),
                    lambda model, usage: session.usage.add(model, usage),
                    private_hosts=options.web_fetch_private_hosts,
                    allowed_domains=options.web_search_allowed_domains,
                    blocked_domains=options.web_search_blocked_domains)
    tasks = task_tools(session.conversation.tasks,
                       [*session.history, *session.pending_messages()])
    return [*web, *tasks]
