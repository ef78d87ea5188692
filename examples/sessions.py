"""Sessions: come back to a conversation later, fork it to try another way, list them.

    ANTHROPIC_API_KEY=... python examples/sessions.py

Every run is saved (under ~/.fuxi/projects/, or FUXI_CONFIG_DIR), so `resume` works from
another process too. A notebook's sessions are listed the same way:
`list_sessions("analysis.ipynb")`.
"""

import asyncio

from fuxi_notebook import (
    FuxiAgentOptions,
    ResultMessage,
    get_session_messages,
    list_sessions,
    query,
    rename_session,
)


async def ask(prompt: str, **session: object) -> ResultMessage:
    async for message in query(prompt=prompt, options=FuxiAgentOptions(max_turns=3, **session)):
        if isinstance(message, ResultMessage):
            return message
    raise RuntimeError("no result")


async def main() -> None:
    first = await ask("Suggest a name for a pet turtle. One word.")
    print(f"first: {first.result}")

    later = await ask("Why that name?", resume=first.session_id)
    print(f"resumed: {later.result} (same session: {later.session_id == first.session_id})")

    other = await ask("Suggest a different one.", resume=first.session_id, fork_session=True)
    print(f"forked: {other.result} (new session: {other.session_id != first.session_id})")
    rename_session(other.session_id, "Turtle names, take two")

    for info in list_sessions("."):  # newest first
        messages = get_session_messages(info.session_id, ".")
        print(f"{info.summary}: {len(messages)} messages")


asyncio.run(main())
