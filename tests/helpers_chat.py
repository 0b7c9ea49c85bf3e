"""Chat-completion messages shared by the tests of --speaker, BatchScorer(speaker=) and /check's "speaker"."""

# the assistant contradicts itself at message 3; the log ends with the user's message
CHAT = [
    {"role": "user", "content": "Do you have dogs?"},
    {"role": "assistant", "content": "I have two dogs."},
    {"role": "user", "content": "Cute!"},
    {"role": "assistant", "content": "I never had dogs."},
    {"role": "user", "content": "Oh, why not?"},
]
# an assistant message without text, as chat logs hold for tool calls
TOOL_CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1"}]}
