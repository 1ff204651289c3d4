"""The roster: endpoints and models (registry), when they rest on a rate limit, their health, onboarding and its
queue."""
