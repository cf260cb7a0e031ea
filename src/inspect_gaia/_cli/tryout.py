"""``inspect-gaia tryout``: a whole run on this machine, before any key or dataset.

Three invented questions shipped with the package (``tryout/questions``, GAIA's layout) run
through the real task, in real sandboxes (each its own container, the attachment copied in), with
a scripted model (``tryout/script``) that answers by running a command there and submitting what
it printed. The run is inspect's, in this process, so its log is an ordinary one: ``inspect view``
and ``inspect-gaia report`` open it. Every answer is right when the machine works; a wrong one
means the sandbox, the attachment or the command's output did not arrive, never a model's doing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..options import DEFAULT_IMAGE

DEFAULT_LOG_DIR = "logs-tryout"
"""Apart from ``logs/``, so a real run's ``report logs/`` never pools the tryout with it."""


@click.command()
@click.option(
    "--image",
    default=DEFAULT_IMAGE,
    show_default=True,
    help="The sandbox image (as -T image=): with no registry, one built by `inspect-gaia image "
    "build --offline`.",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False),
    default=DEFAULT_LOG_DIR,
    show_default=True,
    help="Where the run's log is written.",
)
def tryout(image: str, log_dir: str) -> None:
    """Invented questions run in real sandboxes by a script: checks the machine, no key.

    This checks the machine (Docker, the sandbox image, a question's attachment copied in, a
    command run, the scorer, the log), not a model: the answers come from a script shipped with
    the package, which runs one command per question in the sandbox and submits what it printed.
    All three are right when the machine works. The log opens in `inspect view` and
    `inspect-gaia report` like any run's.

    \b
    Example:
      inspect-gaia tryout
      inspect-gaia tryout --image inspect-gaia/sandbox:bookworm
    """
    from inspect_ai import eval as inspect_eval

    from ..task import gaia
    from ..tryout import script

    questions = Path(script.__file__).parent / "questions"
    (log,) = inspect_eval(
        gaia(dataset_path=str(questions), image=image),
        model=script.script_model(),
        log_dir=log_dir,
    )
    asked = log.eval.dataset.samples or 0
    if log.status != "success" or log.results is None:
        why = log.error.message.strip().splitlines()[0] if log.error else log.status
        click.echo(
            f"inspect-gaia: the tryout did not finish ({why}) — see {log.location}", err=True
        )
        sys.exit(1)
    accuracy = next(
        (s.metrics["accuracy"].value for s in log.results.scores if "accuracy" in s.metrics), 0.0
    )
    right = round(accuracy * asked)
    click.echo(
        f"\ntryout: {right} of {asked} invented questions right (accuracy {accuracy:.3f}), "
        f"in sandboxes of {image}."
    )
    click.echo(
        "This checked the machine (Docker, the sandbox, the attachments, the scorer, the log), "
        "not a model: the answers came from a script shipped with inspect-gaia."
    )
    if right < asked:
        click.echo(
            f"inspect-gaia: {asked - right} of {asked} scripted answers came out wrong: the "
            f"sandbox did not run as it should — open the samples with `inspect view --log-dir "
            f"{log_dir}`, and run `inspect-gaia doctor --image {image}`",
            err=True,
        )
        sys.exit(1)
    click.echo(f"Look at it: inspect view --log-dir {log_dir}   or   inspect-gaia report {log_dir}")
    click.echo(
        "A real run (a gated dataset and a model's key): "
        "inspect eval inspect_gaia/gaia -T level=1 --model openai/gpt-4o"
    )
