"""sandmle: micro-scale synthetic sandboxes to train and judge MLE agents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("sandmle")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
