"""File checkpoints: let the agent change files, then put them back as they were.

The flow of the comparable SDK's checkpointing guide, with the names changed: enable
checkpointing, keep the uuid of the prompt's UserMessage (echoed with
`replay-user-messages`) and the session id, and later resume that session and rewind to
it. Here Bash and Python changes are rewound too, not only Write and Edit.

Run it in a scratch folder: `python examples/file_checkpointing.py`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from fuxi_notebook import (
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    UserMessage,
)


async def change_files() -> tuple[str, str]:
    """Step 1: the agent changes files; the checkpoint and the session to come back to."""
    options = FuxiAgentOptions(
        enable_file_checkpointing=True,
        permission_mode="acceptEdits",  # Write and Edit without asking
        allowed_tools=["Bash(rm *)"],
        extra_args={"replay-user-messages": None},  # the prompt comes back with its uuid
    )
    checkpoint = session = None
    async with FuxiSDKClient(options) as client:
        await client.query("Tidy this folder: rewrite config.ini, drop old.log, add a README.")
        async for message in client.receive_response():
            if isinstance(message, UserMessage) and message.uuid and checkpoint is None:
                checkpoint = message.uuid  # the files as they were before the prompt
            if isinstance(message, ResultMessage):
                session = message.session_id
    assert checkpoint is not None and session is not None
    return checkpoint, session


async def rewind(checkpoint: str, session: str) -> None:
    """Step 2: resume the session and rewind its files to the checkpoint."""
    options = FuxiAgentOptions(enable_file_checkpointing=True, resume=session)
    async with FuxiSDKClient(options) as client:
        await client.query("")  # an empty prompt opens the session and asks nothing
        async for _message in client.receive_response():
            done = await client.rewind_files(checkpoint)
            print("restored:", ", ".join(sorted(Path(p).name for p in done.restored)))
            print("removed:", ", ".join(sorted(Path(p).name for p in done.removed)))
            break


async def main() -> None:
    Path("config.ini").write_text("[app]\ndebug = true\n")
    Path("old.log").write_text("yesterday's log\n")
    checkpoint, session = await change_files()
    print("after the agent:", ", ".join(sorted(p.name for p in Path().iterdir())))
    await rewind(checkpoint, session)
    print("after the rewind:", ", ".join(sorted(p.name for p in Path().iterdir())))
    print("config.ini:", Path("config.ini").read_text().splitlines())


if __name__ == "__main__":
    asyncio.run(main())
