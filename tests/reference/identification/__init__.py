"""References for best-arm identification and top-m policies (spec §5, §6)."""
