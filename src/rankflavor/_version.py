"""The package version: a leaf every module may import (it imports nothing)."""

__version__ = "0.1.0"
