"""Record and replay the web offline, from a clone: the tests' stand-in web around any command.

    python -m support.offline_web [--scripted] [--image IMAGE] -- COMMAND ...

A run's egress proxy refuses private and host addresses, so a web server of one's own cannot be
recorded; the tests use a stand-in "internet" instead (``support/standins.py``): an internal
Docker network of its own, and one container on it that answers as ``weather.example``,
``orrindale-notes.example``, ``huggingface.co`` and a few more (``support/answer_pages.py``). This
driver starts it, lets runs started meanwhile reach it (``TEST_NETWORKS_ENV``: test-only, set here
for COMMAND alone), connects each run's proxy to it as the proxy appears, runs COMMAND, and removes
it all. Nothing leaves the host.

``--scripted`` also serves the tests' scripted model (``support/scripted_model.py``) playing
gaia-leak's three questions (``tests/fixtures/gaia-leak``), each reading a stand-in page before it
answers: give COMMAND ``--model openai-api/scripted/m`` (the variables it needs are set). No key,
no model provider. docs/web-record.md ("Trying it offline") shows a record and its replay.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from contextlib import ExitStack

from inspect_gaia.image_layout import OFFLINE_TAG
from support.answer_pages import WAIT_FOR_STANDINS, leak_agent
from support.scripted_model import Entry, ScriptedModel, serve
from support.standins import standins

HOSTS = ["huggingface.co", "orrindale-notes.example", "weather.example", "bulk.example"]


def scenario() -> list[Entry]:
    """gaia-leak's questions, each first waiting for the stand-ins through the run's proxy."""
    entries = []
    for entry in leak_agent():
        steps = [dict(step) for step in entry.steps]
        first = next(step for step in steps if "bash" in step and "curl" in str(step["bash"]))
        first["bash"] = f"{WAIT_FOR_STANDINS}; {first['bash']}"
        entries.append(Entry(entry.match, steps))
    return entries


def main() -> int:
    """Run COMMAND beside the stand-in web; its exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripted", action="store_true", help="serve the scripted model too")
    parser.add_argument("--image", default=OFFLINE_TAG, help="the stand-ins' image (python3)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    with ExitStack() as stack:
        web = stack.enter_context(standins(args.image, HOSTS, label="offline-web"))
        env = dict(os.environ)  # the test-only variable: COMMAND's alone
        if args.scripted:
            url = stack.enter_context(serve(ScriptedModel(scenario())))
            env.update(SCRIPTED_BASE_URL=url, SCRIPTED_API_KEY="offline")
        stack.enter_context(web.attaching())
        print(f"stand-in web on Docker network {web.network}: {', '.join(HOSTS)}", file=sys.stderr)
        return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
