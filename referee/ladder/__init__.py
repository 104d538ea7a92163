"""A season that runs itself (issue 37)."""
