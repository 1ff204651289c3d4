"""Getting a provider's key by signing in: the vendors' sign-in entries, the flows (hand-off, device, the user's own
app), the user's own apps and the renewal of tokens that expire."""
