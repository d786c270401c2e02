"""Keeping a conversation inside the context window: when the engine says it no longer fits, old tool
observations are cut first (the model has acted on them already), then the newest one is shortened.
The system prompt, the task and the model's own replies are never cut."""

from __future__ import annotations

from agent.core.texts import TRIMMED
from inference.backends.backend import Message

KEEP_RECENT = 2  # the newest observations, cut only when nothing older is left


def trim_observations(messages: list[Message], keep_recent: int = KEEP_RECENT) -> str | None:
    """Shrink the history in place; returns what was done, or None when nothing is left to cut."""
    observations = [i for i, m in enumerate(messages) if _is_observation(m, i) and m.content != TRIMMED]
    old = observations[:-keep_recent] if len(observations) > keep_recent else []
    if old:
        for i in old:
            messages[i] = messages[i].model_copy(update={"content": TRIMMED})
        return f"removed {len(old)} old observation(s)"
    longest = max(observations, key=lambda i: len(messages[i].content), default=None)
    if longest is None or len(messages[longest].content) <= 400:
        return None
    content = messages[longest].content  # only recent ones left: halve the longest, keeping head and tail
    keep = len(content) // 4
    cut = len(content) - 2 * keep
    shortened = f"{content[:keep]}\n[... {cut} characters removed to fit the context window ...]\n{content[-keep:]}"
    messages[longest] = messages[longest].model_copy(update={"content": shortened})
    return f"shortened an observation by {cut} characters"


def _is_observation(message: Message, index: int) -> bool:
    """Tool results: `tool` messages (native calls) and user messages after the task (text protocol)."""
    return message.role == "tool" or (message.role == "user" and index > 1 and "<observation" in message.content)
