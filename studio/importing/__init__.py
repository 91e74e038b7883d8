"""Importing: a pack file, or another tool's export (Rasa, Dialogflow, semantic-router, Lex, CLU), made a profile on the job queue; its pages."""
