"""Reports: functions that turn a stored run into text (terminal) or files."""
