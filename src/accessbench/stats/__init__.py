"""Statistics over stored trials: nothing here reads the store or prints."""
