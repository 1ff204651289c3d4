"""The :merged answer: one model reads every seat's answer and says where they agree and where they differ."""
from __future__ import annotations

from ..canonical import OK, Ask, Message, PanelReply, Text
from ..roster.registry import Model, Registry
from .collection import Collection
from .rankings import Rankings, Standing

INSTRUCTIONS = (
    "You are the merge step of a panel of language models. Several models answered the same question; their "
    "answers are below, each labelled with its seat and model. Write one answer for the user: say plainly where "
    "the seats agree, where they differ (naming the seats), and which claims only one seat makes. Do not invent "
    "facts that no seat gave; when seats contradict each other, say so rather than picking one silently.")


def choose(collection: Collection | None, setting: str | None, registry: Registry, record: Rankings,
           reply: PanelReply) -> Model | None:
    """The collection's merge model, else the setting, else the member with the best record (its judged answers and
    claims, at the lower bound of their Wilson interval), else any that answered."""
    models = registry.models()
    for name in (collection.merge_model if collection else None, setting):
        if name and name in models and models[name].active:
            return models[name]
    answered = [s.model for s in reply.seats if s.status == OK and s.model in models]
    if not answered:
        return None
    stats, none = record.models(collection.name if collection else None), Standing()
    return models[max(answered, key=lambda a: stats.get(a, none).lower_bound())]


def merge_ask(original: Ask, reply: PanelReply) -> Ask:
    blocks = []
    for s in reply.seats:
        if s.status == OK:
            blocks.append(f"<answer seat=\"{s.seat}\" model=\"{s.model}\" kind=\"{s.kind}\">\n{s.answer}\n</answer>")
        else:
            blocks.append(f"<answer seat=\"{s.seat}\" model=\"{s.model}\" kind=\"{s.kind}\" status=\"{s.status}\"/>")
    question = "\n\n".join(f"[{m.role}] {m.text()}" for m in original.messages if m.text())
    body = (f"The question:\n<question>\n{question}\n</question>\n\nThe panel's answers:\n" + "\n\n".join(blocks) +
            "\n\nNow write the merged answer.")
    system = INSTRUCTIONS + (f"\n\nThe original system prompt was:\n{original.system}" if original.system else "")
    return Ask(messages=[Message("user", [Text(body)])], system=system, max_tokens=original.max_tokens,
               temperature=original.temperature, target=original.target)
