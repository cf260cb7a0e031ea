"""questions."""
