"""A killed agent: resume says the running tool's result is unknown, and finds what
the dead process left running."""

from __future__ import annotations

import json
import signal
import subprocess
import uuid

from tests.fake_api import Reply
from tests.forked_runs import popen_agent, run_agent
from tests.print_agent import env_for, events_of, marked, wait_until


def test_sigkill_mid_tool_then_continue_is_valid_and_honest(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"sleep 300; : {marker}"}, id="toolu_x"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    first = popen_agent(
        ["-p", "build it", "--output-format", "stream-json", "--permission-mode", "auto",
         "--cwd", str(tmp_path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert wait_until(lambda: marked(marker)), "the command never started"
        first.send_signal(signal.SIGKILL)  # a crash: no cleanup at all
        first.communicate(timeout=10)
        assert marked(marker), "the command should outlive a SIGKILLed agent"

        fake_api.enqueue(Reply.text("I will check before retrying."))
        second = run_agent(
            ["-p", "what happened?", "--continue", "--output-format", "stream-json",
             "--permission-mode", "auto", "--cwd", str(tmp_path)],
            env=env, timeout=60,
        )
        assert second.returncode == 0, second.stderr
        assert fake_api.rejections == []
        messages = fake_api.requests[-1]["messages"]
        result = messages[2]["content"][0]
        assert result["tool_use_id"] == "toolu_x"
        assert result["content"].startswith("Result unknown") and result["is_error"] is True
        # A command that was killed mid-run may have changed anything: never "changed nothing".
        assert "changed nothing" not in result["content"]
        assert result["content"].endswith("Verify before retrying."), result["content"]
        texts = [b["text"] for b in messages[2]["content"] if b["type"] == "text"]
        assert any("interrupted" in t for t in texts) and texts[-1] == "what happened?"
        events = events_of(second.stdout)
        notices = [e["text"] for e in events if e["type"] == "notice"]
        assert any("still running" in n and marker in n for n in notices), notices
        leftover = [e for e in events if e["type"] == "background_job"]
        assert leftover and leftover[0]["state"] == "running"

        # The user can stop what was left, through the same ops as any background job.
        job_id = leftover[0]["id"]
        third = run_agent(
            ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
             "--continue", "--permission-mode", "auto", "--cwd", str(tmp_path)],
            input=json.dumps({"type": "stop_background", "id": job_id}) + "\n",
            env=env, timeout=60,
        )
        assert wait_until(lambda: not marked(marker), timeout=10), third.stdout + third.stderr
    finally:
        if first.poll() is None:
            first.kill()
        for proc in marked(marker):
            proc.kill()
