"""The desktop window: the only package that imports PySide6 and pyqtgraph."""
