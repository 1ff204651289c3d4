"""Chat UIs' background tasks: a chat UI asks the model of the chat for its titles, tags and follow-up suggestions
with prompts of its own. Such an ask is answered by one member, bare (the UI reads its JSON), and set aside: it is
not a question whose answers want a verdict."""
from __future__ import annotations

from ..canonical import Ask

# Open WebUI's task prompts (its title, tags, follow-ups, search and retrieval queries, image prompt templates) are
# one user message that opens with this heading and quotes the chat between these tags.
OPEN_WEBUI_HEAD = "### Task:"
OPEN_WEBUI_HISTORY = ("<chat_history>", "</chat_history>")


def background(ask: Ask) -> bool:
    """Whether the ask is a chat UI's background task: the last message is a user message holding a task prompt
    (only its head and its chat-history tags are read: one look, not a scan of the whole history)."""
    if not ask.messages or ask.messages[-1].role != "user":
        return False
    text = ask.messages[-1].text().lstrip()
    return text.startswith(OPEN_WEBUI_HEAD) and all(tag in text for tag in OPEN_WEBUI_HISTORY)
