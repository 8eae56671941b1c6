"""opforge."""
