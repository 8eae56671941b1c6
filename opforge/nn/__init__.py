"""Network cells, layers, losses and optimizers (next milestone)."""
