"""The front end: lazy arrays and the functions that build graphs from them."""
