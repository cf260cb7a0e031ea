"""The question first in ``inspect view``'s list of samples, the prompt unchanged for the model.

``inspect view`` lists a log's samples with their input's text (the list's INPUT column, each
sample's header): with the prompt as the input, every row showed the same first lines of
inspect_evals' template ("Please answer the question below. You should: …") and no question.
The prompt cannot move (it is inspect_evals' and EvalScope's, so numbers compare), so the task
keeps it out of the sample's input instead:

* ``question_first`` gives each text sample its question as its input (what the log records and
  the view lists), and keeps the sample's prompt, exactly as the dataset made it;
* its ``gaia_prompt`` step, the task's ``setup`` (which inspect runs before the agent, and before
  a ``--solver`` that replaces it), puts that prompt back as the first user message, where the
  input's message was: the model receives what it received before, to the character.

A sample whose input is not text (``-T multimodal``: the prompt beside the attachment) is left as
it is. Readers take the question from an input either way (``dataset.question_text``).
"""

from __future__ import annotations

from inspect_ai.dataset import Dataset
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from .dataset import question_text

SETUP = "gaia_prompt"
"""The setup step's name in a log's plan."""


def question_first(dataset: Dataset) -> Solver:
    """Make each text sample's input its question (in place); the step that asks the prompt."""
    prompts: dict[str, str] = {}
    for sample in dataset:
        if isinstance(sample.input, str):
            prompts[str(sample.id)] = sample.input
            sample.input = question_text(sample.input)

    @solver(name=SETUP)
    def gaia_prompt() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            prompt = prompts.get(str(state.sample_id))
            first = state.messages[0] if state.messages else None
            if prompt is not None and isinstance(first, ChatMessageUser):
                state.messages[0] = ChatMessageUser(content=prompt, source="input")
            return state

        return solve

    return gaia_prompt()
