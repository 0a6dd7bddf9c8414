"""A followed job: its phases (:mod:`.timeline`), where it stands from its log lines (:mod:`.progress`,
:mod:`.events`), its interruptions, which lines are set-up (:mod:`.setup_lines`) and the status line
drawn at the bottom of a terminal (:mod:`.status_line`). Nothing here talks to a cloud."""
