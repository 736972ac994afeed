"""Policies grouped by setting: thresholding, identification (incl. top-m), regret."""
