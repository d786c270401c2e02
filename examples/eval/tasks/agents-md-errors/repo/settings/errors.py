class SettingsError(Exception):
    """A setting's value is not valid."""
