"""What every area of the studio shares: errors, the audit trail, packs built from the database,
the draft's router, page decorators, roles, labels in words, API plumbing.

Of the areas it uses only the jobs' public names (the draft's router and every save need the
trained model), and the WSGI entry point puts the agents' pull lane in front of Django.
"""
