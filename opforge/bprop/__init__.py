"""Reverse-mode autodiff: bprop registry, grad definitions and GradOperation (next milestone)."""
