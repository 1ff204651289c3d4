"""The suite: code-review tasks (planted bugs with clean controls, claims, real fixes), run and scored."""
