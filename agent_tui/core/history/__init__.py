"""The model view: the conversation as the API must see it, derived from the journal, checked, and exported."""
