"""What a person reads (pure): the rendered plan and refusals, explanations, notifications."""
