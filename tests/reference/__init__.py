"""Plain-Python references written straight from ../shared/spec (loops, no masks)."""
