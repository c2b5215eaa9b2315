"""Model converters into mace's format (installed as mace.converters)."""
from .model import PLATFORMS, MaceModel, convert

__all__ = ["convert", "MaceModel", "PLATFORMS"]
