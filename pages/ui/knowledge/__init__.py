"""The knowledge interview page and its knowledge-base tab."""
