"""References for the cumulative-regret policies (spec algorithms-regret.md §2)."""
