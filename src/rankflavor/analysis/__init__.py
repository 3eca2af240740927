"""What rankflavor does with the engine, one package per capability, each an ``api`` and the result it returns:
spread, explain, diff, compare, identify, estimate, judgments (coverage, bounds, pooling) and check.

The packages are not named by their entry points' module attributes at the top (``rankflavor.spread`` is the
function), so importing one never rebinds a public name of the package."""
