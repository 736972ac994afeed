"""Analysis: metrics, truth, oracles, plotting, the results store."""
