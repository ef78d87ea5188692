"""`%fuxi permissions` in a real kernel: the rules in force with where each comes from, and
revoking what "Always allow" granted, after which a later cell asks again. "Always allow"
on a compound command grants the safe part only."""

from __future__ import annotations

from fuxi_notebook.testing import Turn, text, tool_use

from .kernel_harness import record_of


def _plain(result) -> str:
    return "\n".join(d["data"].get("text/plain", "") for d in result.displays)


def test_the_list_names_each_rule_and_where_it_comes_from(fresh, api):
    fresh.run("%fuxi config --allowed-tools 'Read,Bash(ls *)' --disallowed-tools 'Bash(rm *)'")
    try:
        listed = fresh.run("%fuxi permissions")
        assert listed.status == "ok", listed.messages
        shown = _plain(listed)
        assert "allow Read  (options (--allowed-tools, %fuxi config))" in shown, shown
        assert "allow Bash(ls *)" in shown and "deny Bash(rm *)" in shown
        assert "permission mode default" in shown
    finally:
        fresh.run("%fuxi config --allowed-tools '' --disallowed-tools ''")


def test_a_granted_rule_is_revoked_and_the_next_cell_asks_again(fresh, api):
    fresh.run("open('nb.txt', 'w').write('abc')\nimport os\nos.makedirs('scratch', exist_ok=True)")
    api.add(Turn([tool_use("Bash", {"command": "touch marker.txt && rm -rf scratch"})]),
            Turn([text("Counted.")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\ncount and tidy", cell_id="cell-grant")
    fresh.click(fresh.button("Always allow", after=mark))
    first = fresh.wait(msg_id, timeout=30)
    assert first.status == "ok", first.messages
    approval = record_of(first)["approvals"][0]
    assert approval["decision"] == "always_allow" and approval["rule"] == "Bash(touch marker.txt)"

    listed = _plain(fresh.run("%fuxi permissions"))
    assert "  1 allow Bash(touch marker.txt)  (granted in this conversation (Always allow))" in (
        listed), listed

    # granted: the same command in a later cell runs without a card
    api.add(Turn([tool_use("Bash", {"command": "touch marker.txt"})]), Turn([text("touched")]))
    granted = fresh.run("%%fuxi\ncount again", cell_id="cell-uses", timeout=30)
    assert granted.status == "ok"
    assert record_of(granted)["approvals"] == []

    from_code = fresh.run("get_ipython().run_line_magic('fuxi', 'permissions revoke 1')")
    assert from_code.status == "error"
    bad = fresh.run("%fuxi permissions revoke 7")
    assert bad.status == "error" and "not the number of a granted rule" in (
        bad.reply["content"]["evalue"])
    revoked = fresh.run("%fuxi permissions revoke 1")
    assert revoked.status == "ok", revoked.messages
    assert "revoked 1 rule(s)" in _plain(revoked)
    assert "touch marker.txt" not in _plain(fresh.run("%fuxi permissions"))

    api.add(Turn([tool_use("Bash", {"command": "touch marker.txt"})]), Turn([text("touched")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nonce more", cell_id="cell-after")
    fresh.click(fresh.button("Allow", after=mark))  # the card is back
    assert fresh.wait(msg_id, timeout=30).status == "ok"


def test_a_write_the_tool_will_refuse_is_not_put_to_the_user_and_grants_nothing(fresh, api):
    """Issue 39 (1): writing an existing file the agent has not read is refused before
    anyone is asked: no card (so no "Always allow" to click), no rule granted."""
    fresh.run("open('notes.txt', 'w').write('mine')")
    api.add(Turn([tool_use("Write", {"file_path": "notes.txt", "content": "theirs"})]),
            Turn([text("I could not write it.")]))
    result = fresh.run("%%fuxi\nrewrite the notes", cell_id="cell-blind", timeout=30)
    assert result.status == "ok", result.messages
    assert not any(m["msg_type"] == "comm_open"
                   for m in fresh.messages(result.reply["parent_header"]["msg_id"]))
    assert record_of(result)["approvals"] == []
    sent = str(api.requests[-1]["messages"][-1])
    assert "File has not been read yet" in sent
    assert fresh.run("print(open('notes.txt').read())").stdout == "mine\n"
    assert "Edit(" not in _plain(fresh.run("%fuxi permissions"))
