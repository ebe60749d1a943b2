"""The project's shared core: configuration, tools, the offline model, run records.

Everything here is plumbing that every implementation shares, so that the stage files can
read as lessons and the implementations stay comparable.
"""
