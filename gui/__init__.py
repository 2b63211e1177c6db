"""The PySide6 desktop app. It draws what ddr_explorer.core computes."""
