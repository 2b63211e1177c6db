"""Core of DDR Explorer: corpus, statistics and reports. Never imports Qt."""
