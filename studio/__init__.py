"""Route Studio: the Django app where people author agent profiles and turn them into packs."""
