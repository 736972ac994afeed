"""Paper reproductions: ``python -m experiments run NAME [--quick] [--reps R] [--out DIR]``."""
