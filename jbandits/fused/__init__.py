"""The fused backend."""
