"""Rate limits in one room: the limits the user sets (config/limits.json), their counting and refusal before a call, and
what rests on a provider's own limit."""
