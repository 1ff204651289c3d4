def _explore(self, count, models, taken, plan, seat, check) -> None:
    """The active non-members that have waited longest since they were last asked; ties at random."""
    with self._lock:
        pool = [m for a, m in models.items() if a not in taken and m.active and not m.ad_hoc]
        pool.sort(key=lambda m: (self._last.get(m.alias, 0.0), random.random()))
        chosen = 0
        for model in pool:
            if chosen == count:
                break
            reason = check(model)
            if reason:
                plan.passed_over.append({"model": model.alias, "reason": reason})
                continue
            seat(model, EXPLORE)
            self._last[model.alias] = self._stamp()   # claimed now, so a concurrent panel picks the next one
            chosen += 1
