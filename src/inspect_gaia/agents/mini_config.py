"""mini-swe-agent's configuration for GAIA, in place of its SWE-bench one (``mini.yaml``).

mini-swe-agent's ``mini`` reads one configuration file (``MSWEA_MINI_CONFIG_PATH``, else its own
``mini.yaml``), whose templates are written for a repository to fix: "Please solve this issue",
"Analyze the codebase", "Edit the source code", sed recipes for ``.py`` files. inspect_swe 0.2.72
takes no configuration of its own, so each sample gets this one written into its sandbox
(``image_layout.MINI_CONFIG``) and ``mini`` is pointed at it. It keeps mini's shape (one bash tool
call a turn, each command in a new shell, its exit command) and says GAIA's task instead:

* the system template says what the agent is (a general assistant on a GAIA question, working
  through a shell); the instance template is the task's own prompt (GAIA's question, answer rules
  and the attachment's path, unchanged, as every agent gets it) followed by how to work and how to
  answer;
* the answer is GAIA's convention, as for the other CLIs: a last line ``FINAL ANSWER: <answer>``
  in the reply's text, and, in the same reply, mini's exit command alone
  (``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``), after which mini stops;
* a command may run ``command_timeout`` seconds (mini's own default is 30), the task's
  ``-T command_timeout``;
* no step or cost limit of mini's: the task's message, token and time limits apply to the bridged
  conversation; the bridge's model has no price in litellm's list anyway.

The observation template is mini's JSON form of a command's output (head and tail of a long one).
"""

from __future__ import annotations

import hashlib

import yaml

EXIT_COMMAND = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini's exit: a command whose output's first line is this word ends the run."""

SYSTEM_TEMPLATE = """\
You are a general AI assistant answering a question from the GAIA benchmark. You work on a Linux \
machine through a bash tool: run commands, read files, write and run scripts to find the answer.
"""

INSTANCE_TEMPLATE = (
    """\
{{task}}

## How to work

Each of your replies explains briefly what you do next and calls the bash tool once, with one \
command. Each command runs in a new shell: a change of directory or a variable does not carry \
over to the next command (chain them with `&&`, or write files). A command may run for \
{{timeout}} seconds at most. You see its output in the next message. A file the question names \
is at the path it gives.

## How to answer

When you have the answer, end your reply's text with a line of the form

FINAL ANSWER: <your answer>

following the answer rules above (a number, as few words as possible, or a comma separated \
list), and in the same reply call the bash tool with this command alone: `"""
    + EXIT_COMMAND
    + """`. That line is what is scored, and after that command you cannot continue.
"""
)

OBSERVATION_TEMPLATE = """\
{%- if output.output | length < 10000 -%}
{
  "returncode": {{ output.returncode }},
  "output": {{ output.output | tojson }}
  {%- if output.exception_info %}, "exception_info": {{ output.exception_info | tojson }}{% endif %}
}
{%- else -%}
{
  "returncode": {{ output.returncode }},
  "output_head": {{ output.output[:5000] | tojson }},
  "output_tail": {{ output.output[-5000:] | tojson }},
  "elided_chars": {{ output.output | length - 10000 }},
  "warning": "Output too long."
  {%- if output.exception_info %}, "exception_info": {{ output.exception_info | tojson }}{% endif %}
}
{%- endif -%}
"""

FORMAT_ERROR_TEMPLATE = (
    """\
Your reply could not be run: {{error}}

Each reply calls the bash tool once, with one command as its argument \
({"command": "your command"}). To answer, end the reply's text with the FINAL ANSWER line and \
call the bash tool with `"""
    + EXIT_COMMAND
    + """` alone.
"""
)


def mini_config(command_timeout: int) -> str:
    """The configuration ``mini`` reads (YAML), a command limited to ``command_timeout`` s."""
    config = {
        "agent": {
            "system_template": SYSTEM_TEMPLATE,
            "instance_template": INSTANCE_TEMPLATE,
            "step_limit": 0,
            "cost_limit": 0.0,
            "mode": "yolo",
        },
        "environment": {
            "timeout": command_timeout,
            # the pagers and progress bars a shell command would otherwise wait on or print
            "env": {
                "PAGER": "cat",
                "MANPAGER": "cat",
                "LESS": "-R",
                "PIP_PROGRESS_BAR": "off",
                "TQDM_DISABLE": "1",
            },
        },
        "model": {
            "observation_template": OBSERVATION_TEMPLATE,
            "format_error_template": FORMAT_ERROR_TEMPLATE,
            "model_kwargs": {"drop_params": True},
        },
    }
    return yaml.safe_dump(config, sort_keys=False, width=100)


def configuration(name: str) -> str | None:
    """How the record names the configuration ``name`` gets in place of its own, if any.

    ``gaia`` and the SHA-256 of its templates (the command timeout is recorded on its own).
    """
    if name != "mini_swe_agent":
        return None
    words = (SYSTEM_TEMPLATE, INSTANCE_TEMPLATE, OBSERVATION_TEMPLATE, FORMAT_ERROR_TEMPLATE)
    return f"gaia {hashlib.sha256(chr(0).join(words).encode()).hexdigest()[:12]}"
