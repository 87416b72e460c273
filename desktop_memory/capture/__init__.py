"""What the OS says about a copy (the active window; later, hotkey backends): no Qt here."""
