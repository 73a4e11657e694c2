"""One Textual screen per module. Screens call engine functions in workers, never on the event loop."""
