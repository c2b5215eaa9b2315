"""Model converters into mace's format (installed as mace.converters)."""
