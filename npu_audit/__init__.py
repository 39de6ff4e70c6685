"""npu-audit: static checks and codemods for Ascend NPU session options in TensorFlow scripts.

The package never imports or executes the code it analyses.
"""

__version__ = "0.2.0"
