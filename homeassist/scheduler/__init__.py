"""Timers, alarms, reminders and delayed device actions that survive restarts (APScheduler)."""
