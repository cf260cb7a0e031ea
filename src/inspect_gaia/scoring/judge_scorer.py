"""The judge (``judge``) as an inspect scorer, ``inspect_gaia/gaia_judge``; not in the task's list.

``inspect score LOG --scorer inspect_gaia/gaia_judge -S model=openai/gpt-4.1 --action append``
records the judge's verdicts in the log beside the official ones (visible in ``inspect view``);
``inspect-gaia report --judge`` reads them there instead of calling again.
"""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    Score,
    Scorer,
    Target,
    accuracy,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from ..defaults import OFFICIAL_SCORER
from ..questions.dataset import question_text
from .judge import JUDGE_SCORER, ask, judge_model, load_prompt
from .scorer import final_answer


@scorer(metrics=[accuracy(), stderr()], name=JUDGE_SCORER)
def gaia_judge(model: str | None = None, prompt: str | None = None) -> Scorer:
    """GAIA's answer graded by an LLM judge: a second opinion, recorded beside the official one.

    The answer is the one the official scorer scored (its score's ``answer`` when the state has it,
    as ``inspect score --action append`` gives it; else ``scorer.final_answer``); the judge sees the
    question (from the sample's input), the target and that answer. ``NOANSWER`` when the judge
    failed or its reply has no grade (the explanation says which). The score's metadata records
    the judge model and the prompt's name and SHA-256, which ``inspect-gaia report --judge``
    matches before it takes a verdict from the log.

    Args:
        model: The judge (any inspect model); default: the model being evaluated.
        prompt: A prompt template file (``{question}``, ``{gold}``, ``{answer}``); default: the
            project's own.
    """
    template = load_prompt(prompt, "-S prompt")

    async def score(state: TaskState, target: Target) -> Score:
        judge = judge_model(model) if model else get_model()
        official = (state.scores or {}).get(OFFICIAL_SCORER)
        answer = official.answer if official and official.answer is not None else None
        if answer is None:
            answer, _ = final_answer(state)
        verdict = await ask(judge, template, question_text(state.input_text), target.text, answer)
        metadata = {
            "judge_model": str(judge),
            "prompt_name": template.name,
            "prompt_sha256": template.sha256,
        }
        if verdict.correct is None:
            return Score(
                value=NOANSWER,
                answer=answer,
                explanation=f"no verdict: {verdict.error}",
                metadata=metadata,
            )
        return Score(
            value=CORRECT if verdict.correct else INCORRECT,
            answer=answer,
            explanation=verdict.reply,
            metadata=metadata,
        )

    return score
