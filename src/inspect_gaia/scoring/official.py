"""The official GAIA scorer, kept as close to upstream as a typed, never-raising port allows.

Upstream: https://huggingface.co/spaces/gaia-benchmark/leaderboard/blob/main/scorer.py
Copyright 2023 The GAIA Benchmark Authors, Apache License 2.0.

The functions keep upstream's names, order, signatures and branches, so a side-by-side diff
shows exactly what changed. Every change is marked ``# inspect_gaia:`` and none changes a verdict
on string inputs:

* ``question_scorer`` returns ``(verdict, explanation)`` (as inspect_evals' and evalscope's ports
  do) instead of a bare ``bool``; upstream's ``print`` of the branch taken becomes the explanation
  and its ``warnings.warn`` on a length mismatch becomes part of it.
* It never raises: a ``None`` answer is scored as ``"None"`` (as upstream does), any other
  non-string answer or ground truth as its text (upstream raises on them).
* ``normalize_number_str`` does not print when a string is not a number.
* Type hints and ``char_list``'s default are spelled for mypy strict (same values).
"""

from __future__ import annotations

import re
import string


def normalize_number_str(number_str: str) -> float:
    """Parse a number after removing ``$``, ``%`` and ``,``; ``inf`` when it is not one."""
    # Common units and thousands separators go, so that the rest converts to a float.
    for char in ["$", "%", ","]:
        number_str = number_str.replace(char, "")
    try:
        return float(number_str)
    except ValueError:
        # inspect_gaia: upstream prints that the string is not a number.
        return float("inf")


def split_string(
    s: str,
    char_list: list[str] | None = None,  # inspect_gaia: upstream's default is [",", ";"]
) -> list[str]:
    """Split ``s`` on any of ``char_list`` (default ``,`` and ``;``)."""
    if char_list is None:
        char_list = [",", ";"]
    pattern = f"[{''.join(char_list)}]"
    return re.split(pattern, s)


def question_scorer(
    model_answer: str | None,
    ground_truth: str,
) -> tuple[bool, str]:  # inspect_gaia: upstream returns the verdict alone
    """Judge ``model_answer`` against ``ground_truth`` with the official GAIA rules.

    A numeric ground truth is compared as a float after stripping ``$ % ,`` from the answer; a
    ground truth containing ``,`` or ``;`` is compared item by item, in order (numbers as floats,
    strings without whitespace, case-insensitive, punctuation kept); anything else is compared as a
    string without whitespace, case or punctuation.

    Returns:
        The verdict, and one sentence saying how it was reached.
    """

    def is_float(element: object) -> bool:
        try:
            float(element)  # type: ignore[arg-type]
            return True
        except ValueError:
            return False

    if model_answer is None:
        model_answer = "None"
    # inspect_gaia: upstream raises on any other non-string; scored as text here.
    model_answer = _as_text(model_answer)
    ground_truth = _as_text(ground_truth)

    # if gt is a number
    if is_float(ground_truth):
        explanation = (
            f"Evaluated {_quote(model_answer)} as a number against {_quote(ground_truth)}."
        )
        normalized_answer = normalize_number_str(model_answer)
        return normalized_answer == float(ground_truth), explanation

    # if gt is a list
    elif any(char in ground_truth for char in [",", ";"]):
        explanation = (
            f"Evaluated {_quote(model_answer)} as a comma separated list against "
            f"{_quote(ground_truth)}."
        )
        gt_elems = split_string(ground_truth)
        ma_elems = split_string(model_answer)

        # check length is the same
        if len(gt_elems) != len(ma_elems):
            # inspect_gaia: upstream warns "Answer lists have different lengths".
            return False, (
                f"{explanation[:-1]}: {len(ma_elems)} items where {len(gt_elems)} were expected."
            )

        # compare each element as float or str
        comparisons = []
        for ma_elem, gt_elem in zip(ma_elems, gt_elems, strict=True):
            if is_float(gt_elem):
                normalized_ma_elem = normalize_number_str(ma_elem)
                comparisons.append(normalized_ma_elem == float(gt_elem))
            else:
                # Punctuation stays: list items such as "St. Petersburg" depend on it.
                comparisons.append(
                    normalize_str(ma_elem, remove_punct=False)
                    == normalize_str(gt_elem, remove_punct=False)
                )
        return all(comparisons), explanation

    # if gt is a str
    else:
        explanation = (
            f"Evaluated {_quote(model_answer)} as a string against {_quote(ground_truth)}."
        )
        return normalize_str(model_answer) == normalize_str(ground_truth), explanation


def normalize_str(input_str: str, remove_punct: bool = True) -> str:
    """Drop all whitespace, lowercase, and (by default) drop ASCII punctuation."""
    # All whitespace goes, e.g. for "seagull" against "sea gull".
    no_spaces = re.sub(r"\s", "", input_str)

    # Remove punctuation, if specified.
    if remove_punct:
        translator = str.maketrans("", "", string.punctuation)
        return no_spaces.lower().translate(translator)
    else:
        return no_spaces.lower()


# --- inspect_gaia: helpers of the port, not upstream ----------------------------------------------


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _quote(text: str, limit: int = 200) -> str:
    # Explanations land in the log and the viewer: a megabyte answer must not.
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f" (+{len(text) - limit} chars)"
