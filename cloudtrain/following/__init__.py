"""A followed job: phases, progress, interruptions, set-up lines, the status line. Nothing here talks to a cloud."""
